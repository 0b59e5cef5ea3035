import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

@testable import KeyportDesktop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The parts of Keyport's clipboard owner that need no display server: reading `DISPLAY` and the
/// Xauthority file, the abstract socket X servers listen on, and what it refuses. Serving the
/// clipboard is tested against Xvfb and a headless sway in DesktopTypingTests.
@Suite("The clipboard's display servers")
struct ClipboardTests {
    @Test("DISPLAY: a local server's number; a server over the network or a name that is no display refused")
    func display() throws {
        #expect(try X11Clipboard.parse(":0").number == 0)
        #expect(try X11Clipboard.parse(":12.1").number == 12)
        #expect(try X11Clipboard.parse("unix:3").number == 3)
        #expect {
            try X11Clipboard.parse("example.com:0")
        } throws: { "\($0)".contains("over the network") }
        for wrong in ["", "0", ":", ":x", ":-1"] {
            #expect(throws: ClipboardError.self, "\(wrong)") { try X11Clipboard.parse(wrong) }
        }
    }

    /// One Xauthority entry as libXau writes it.
    private func entry(family: Int, address: [UInt8], number: String, name: String, data: [UInt8]) -> [UInt8] {
        func field(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
        return [UInt8(family >> 8), UInt8(family & 0xFF)] + field(address) + field(Array(number.utf8))
            + field(Array(name.utf8)) + field(data)
    }

    @Test("Xauthority: the cookie for this host's display, not another host's or display's; a cut file gives none")
    func xauthority() throws {
        let directory = try TemporaryDirectory("kp-xauth")
        defer { directory.remove() }
        var host = [UInt8](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let here = Array(host.prefix { $0 != 0 })
        let file = directory.url.appendingPathComponent("Xauthority")
        let bytes =
            entry(family: 256, address: Array("elsewhere".utf8), number: "5", name: "MIT-MAGIC-COOKIE-1", data: [1])
            + entry(family: 256, address: here, number: "4", name: "MIT-MAGIC-COOKIE-1", data: [2])
            + entry(family: 256, address: here, number: "5", name: "XDM-AUTHORIZATION-1", data: [3])
            + entry(family: 256, address: here, number: "5", name: "MIT-MAGIC-COOKIE-1", data: [4, 4])
            + entry(family: 65535, address: [], number: "7", name: "MIT-MAGIC-COOKIE-1", data: [7])
        try Data(bytes).write(to: file)
        let environment = ["XAUTHORITY": file.path]
        #expect(XAuthority.cookie(forDisplay: 5, environment: environment) == [4, 4])
        #expect(XAuthority.cookie(forDisplay: 4, environment: environment) == [2])
        #expect(XAuthority.cookie(forDisplay: 7, environment: environment) == [7])
        #expect(XAuthority.cookie(forDisplay: 9, environment: environment) == nil)
        // ~/.Xauthority when XAUTHORITY is not set.
        try Data(bytes).write(to: directory.url.appendingPathComponent(".Xauthority"))
        #expect(XAuthority.cookie(forDisplay: 5, environment: ["HOME": directory.path]) == [4, 4])
        try Data(bytes.dropLast(3)).write(to: file)
        #expect(XAuthority.cookie(forDisplay: 7, environment: environment) == nil)
    }

    @Test("a socket in the abstract namespace is reached by name, as X servers listen there too")
    func abstractSocket() throws {
        let name = "/tmp/.keyport-test-\(getpid())"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        let bound = try UnixSocketAddress.with(name, abstract: true) { address, length in
            bind(listener, address, length)
        }
        #expect(bound == 0 && listen(listener, 1) == 0)
        let connected = try UnixSocketAddress.connect(name, abstract: true)
        close(connected)
        #expect(!FileManager.default.fileExists(atPath: name))
        #expect {
            try UnixSocketAddress.connect(name + "-none", abstract: true)
        } throws: { ($0 as? UnixSocketError)?.isRefused == true }
    }

    @Test("no display server, or a text longer than the clipboard takes: refused, saying which")
    func refusals() throws {
        #expect {
            try ClipboardOwner.serve(SecretBytes("code"), environment: [:], seconds: 1) {}
        } throws: { "\($0)".contains("neither WAYLAND_DISPLAY nor DISPLAY") }
        #expect {
            try ClipboardOwner.serve(
                SecretBytes(String(repeating: "x", count: ClipboardOwner.maximumLength + 1)),
                environment: ["DISPLAY": ":0"],
                seconds: 1
            ) {}
        } throws: { "\($0)".contains("at most \(ClipboardOwner.maximumLength)") }
        #expect {
            try ClipboardOwner.serve(
                SecretBytes("code"),
                environment: ["WAYLAND_DISPLAY": "wayland-none", "XDG_RUNTIME_DIR": "/nonexistent"],
                seconds: 1
            ) {}
        } throws: { "\($0)".contains("cannot reach the Wayland compositor") }
    }
}
