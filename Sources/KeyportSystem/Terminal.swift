import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The person's terminal.
package enum Terminal {
    /// Reads one line typed on the controlling terminal with echo off (a passphrase), after
    /// writing `prompt` there; echo comes back whatever happens. Without a terminal, reads a line
    /// from standard input (scripts). `nil` at the end of input.
    package static func readSecret(prompt: String) -> String? {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard tty >= 0 else { return readLine(strippingNewline: true) }
        defer { close(tty) }
        _ = prompt.utf8CString.withUnsafeBufferPointer { write(tty, $0.baseAddress, $0.count - 1) }
        var saved = termios()
        let hasAttributes = tcgetattr(tty, &saved) == 0
        if hasAttributes {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(tty, TCSAFLUSH, &quiet)
        }
        defer { if hasAttributes { tcsetattr(tty, TCSAFLUSH, &saved) } }
        var bytes: [UInt8] = []
        defer { Wipe.bytes(&bytes) }
        var byte: UInt8 = 0
        while read(tty, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
