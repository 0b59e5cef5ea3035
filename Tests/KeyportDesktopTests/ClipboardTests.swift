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
            #expect(throws: DesktopError.self, "\(wrong)") { try X11Clipboard.parse(wrong) }
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

/// What the RemoteDesktop portal is told and how its messages are read: keysyms, and D-Bus values
/// written and read back (the portal itself is met in DesktopTypingTests, through the real
/// xdg-desktop-portal).
@Suite("The RemoteDesktop portal's keys and D-Bus's values")
struct PortalWireTests {
    @Test(
        "keysyms: Latin-1 as itself, other characters at 0x01000000 plus their code, Tab as XK_Tab, other control characters none"
    )
    func keysyms() {
        #expect(RemoteDesktopPortal.keysym(for: "a") == 0x61)
        #expect(RemoteDesktopPortal.keysym(for: "Z") == 0x5A)
        #expect(RemoteDesktopPortal.keysym(for: "é") == 0xE9)
        #expect(RemoteDesktopPortal.keysym(for: "€") == 0x0100_20AC)
        #expect(RemoteDesktopPortal.keysym(for: "😀") == 0x0101_F600)
        #expect(RemoteDesktopPortal.keysym(for: "\t") == 0xFF09)
        for control: Unicode.Scalar in ["\n", "\r", "\u{7F}", "\u{85}"] {
            #expect(RemoteDesktopPortal.keysym(for: control) == nil)
        }
    }

    @Test("values written are read back, each aligned as the specification says, after any offset")
    func roundTrip() throws {
        let values: [DBusValue] = [
            .byte(7), .objectPath("/org/freedesktop/portal/desktop/session/1_42/keyport"),
            .options([
                ("types", .uint32(1)), ("restore", .string("tok")), ("big", .uint64(1 << 40)),
                ("nested", .variant("ai", .array("i", [.int32(-1), .int32(2)]))), ("flag", .boolean(true)),
            ]),
            .structure([.byte(1), .double(0.5)]), .int32(Int32(bitPattern: 0x0100_20AC)), .signature("a{sv}"),
        ]
        let signature = values.map(DBusValue.signature(of:)).joined()
        #expect(signature == "yoa{sv}(yd)ig")
        for start in 0..<8 {
            var writer = DBusWriter()
            for _ in 0..<start { writer.write(.byte(0)) }
            for value in values { writer.write(value) }
            var reader = DBusReader(writer.bytes, offset: start)
            #expect(try reader.read(signature: signature) == values, "from offset \(start)")
            #expect(reader.offset == writer.bytes.count)
        }
        let results = DBusValue.options([("devices", .uint32(1)), ("session_handle", .string("/s"))]).dictionary
        #expect(results["devices"]?.uint32 == 1 && results["session_handle"]?.string == "/s")
    }

    @Test("a message cut short, or a signature that does not close, is an error, never a crash")
    func malformed() throws {
        var writer = DBusWriter()
        writer.write(.options([("types", .uint32(1))]))
        for length in 0..<writer.bytes.count {
            var reader = DBusReader(Array(writer.bytes.prefix(length)))
            #expect(throws: DBusFormatError.self, "\(length) bytes") { try reader.read(signature: "a{sv}") }
        }
        var reader = DBusReader(writer.bytes)
        #expect(throws: DBusFormatError.self) { try reader.read(signature: "a{sv") }
        var unknown = DBusReader([UInt8](repeating: 0, count: 8))
        #expect(throws: DBusFormatError.self) { try unknown.read(signature: "z") }
        // An array of 8 bytes of empty structures would never end.
        var empty = DBusReader([8, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8))
        #expect(throws: DBusFormatError.self) { try empty.read(signature: "a()") }
        // Nested deeper than the specification allows.
        var body: [UInt8] = [7]
        for _ in 0..<70 { body = [UInt8(body.count & 0xFF), UInt8(body.count >> 8), 0, 0] + body }
        var deep = DBusReader(body)
        #expect {
            try deep.read(signature: String(repeating: "a", count: 70) + "y")
        } throws: { ($0 as? DBusFormatError)?.description.contains("64") == true }
    }
}
