import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The cookie an X server on this machine wants, from the Xauthority file (`XAUTHORITY`, else
/// `~/.Xauthority`): entries of family, address, display number, name and data, each a 16-bit
/// big-endian length and its bytes (libXau's format).
enum XAuthority {
    static let cookieName = Array("MIT-MAGIC-COOKIE-1".utf8)

    private static let familyLocal = 256
    private static let familyWild = 65535

    /// The `MIT-MAGIC-COOKIE-1` for display `number` on this host, or nil (a server without
    /// authentication, such as Xvfb by default, takes a connection without one).
    static func cookie(forDisplay number: Int, environment: [String: String]) -> [UInt8]? {
        let path: String
        if let file = environment["XAUTHORITY"], !file.isEmpty {
            path = file
        } else if let home = environment["HOME"], !home.isEmpty {
            path = home + "/.Xauthority"
        } else {
            return nil
        }
        guard let bytes = contents(of: path) else { return nil }
        var host = [UInt8](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let hostName = Array(host.prefix { $0 != 0 })
        let display = Array(String(number).utf8)
        var offset = 0
        func field() -> [UInt8]? {
            guard offset + 2 <= bytes.count else { return nil }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            guard offset + 2 + length <= bytes.count else { return nil }
            defer { offset += 2 + length }
            return Array(bytes[offset + 2..<offset + 2 + length])
        }
        while offset + 2 <= bytes.count {
            let family = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            offset += 2
            guard let address = field(), let entryNumber = field(), let name = field(), let data = field() else {
                return nil
            }
            let here = family == familyWild || (family == familyLocal && address == hostName)
            if here, entryNumber.isEmpty || entryNumber == display, name == cookieName { return data }
        }
        return nil
    }

    /// The file's bytes, at most 64 KiB of them.
    private static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 65536)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer -> Int in
                read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        return Array(bytes.prefix(count))
    }
}
