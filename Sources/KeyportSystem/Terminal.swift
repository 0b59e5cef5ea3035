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
        // Nothing interrupts this read: -1 is a descriptor poll leaves alone.
        switch readAnswer(from: tty, echo: false, unless: -1) {
        case .line(let line): return line
        case .end, .interrupted: return nil
        }
    }
}

extension Terminal {
    /// What ``readAnswer(from:echo:unless:)`` read.
    package enum Answer: Sendable, Equatable {
        /// A line, without its newline.
        case line(String)
        /// The end of input (Ctrl-D on an empty line, the terminal gone).
        case end
        /// `unless` became readable first: the question was taken away.
        case interrupted
    }

    /// Whether `descriptor` is a terminal.
    package static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) == 1
    }

    /// Throws away what was typed on the terminal `descriptor` and not read yet, so that text
    /// typed before a question was shown cannot answer it.
    package static func discardTypedAhead(_ descriptor: Int32) {
        tcflush(descriptor, TCIFLUSH)
    }

    /// Reads one line from the terminal `descriptor` (canonical mode: the line is there once Enter
    /// was pressed), with echo off when `echo` is false (a secret: the bytes read are wiped once
    /// the line is made); returns ``Answer/interrupted`` as soon as `unless` (a pipe's reading
    /// end) has something to read, whatever was typed so far.
    package static func readAnswer(from descriptor: Int32, echo: Bool, unless interrupt: Int32) -> Answer {
        var saved = termios()
        let quiet = !echo && tcgetattr(descriptor, &saved) == 0
        if quiet {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(descriptor, TCSANOW, &silent)
        }
        defer { if quiet { tcsetattr(descriptor, TCSANOW, &saved) } }
        // In canonical mode a read returns at most one line of at most 4 KiB (the terminal's own
        // limit): the chunk it lands in is kept out of core dumps.
        var bytes: [UInt8] = []
        defer { Wipe.bytes(&bytes) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        SecretMemory.protect(&chunk)
        defer { Wipe.bytes(&chunk) }
        while true {
            var watched = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: interrupt, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&watched, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .end
            }
            if watched[1].revents != 0 { return .interrupted }
            guard watched[0].revents != 0 else { continue }
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return bytes.isEmpty ? .end : .line(String(decoding: bytes, as: UTF8.self)) }
            for byte in chunk[..<count] {
                if byte == UInt8(ascii: "\n") { return .line(String(decoding: bytes, as: UTF8.self)) }
                bytes.append(byte)
            }
        }
    }
}
