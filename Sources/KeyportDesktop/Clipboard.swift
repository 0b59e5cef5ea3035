import KeyportErrors
import KeyportSystemCore

/// Why Keyport could not copy or type in the person's session, said for the person.
package struct DesktopError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<DesktopError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<DesktopError> {
    /// No graphical session, or no session bus, to work in: the variables that name one are not
    /// set, or name something else.
    package static let noSession = Self(rawValue: "no-session")
    /// The display server, the bus or the portal could not be reached, or the connection broke.
    package static let unreachable = Self(rawValue: "unreachable")
    /// It did not answer in time.
    package static let timedOut = Self(rawValue: "timed-out")
    /// It refused what was asked.
    package static let refused = Self(rawValue: "refused")
    /// The person declined in the desktop's own dialog.
    package static let declined = Self(rawValue: "declined")
    /// It lacks what Keyport needs (a data-control protocol, a keyboard, a portal), or the text is
    /// one it cannot carry faithfully.
    package static let unsupported = Self(rawValue: "unsupported")
    /// It said something Keyport cannot read.
    package static let protocolError = Self(rawValue: "protocol-error")
    /// The text is longer than the clipboard takes.
    package static let tooLong = Self(rawValue: "too-long")
    /// Another program's copy took the clipboard from Keyport's.
    package static let replaced = Self(rawValue: "replaced")
}

/// The clipboard served by Keyport itself: the text and, beside it, the hint password managers and
/// clipboard histories read to leave a secret out of their history.
///
/// Tools such as `wl-copy` and `xclip` offer one type per copy, so the text and the hint cannot go
/// together through them; and a process that only reads the clipboard later cannot tell whether
/// what it holds is still Keyport's. Here the process that copies stays the clipboard's owner (on
/// X11 the selection's owner; on Wayland a data-control source), answers the types below, and ends
/// after its time: the display server then clears the clipboard if, and only if, it was still
/// Keyport's — the person's own copy since then is never touched, with no window for a race.
package enum ClipboardOwner {
    /// The hint KDE's Klipper, wl-clipboard's `CLIPBOARD_STATE` (cliphist, clipman) and others
    /// read: a secret, not for the history.
    package static let passwordManagerHint = "x-kde-passwordManagerHint"

    /// The most text served: within what an X server takes in one request (16 KiB is the least a
    /// server must take), and far above a password or a code.
    package static let maximumLength = 16_000

    /// How serving ended.
    package enum Ending: Sendable, Equatable {
        /// The time was up; the clipboard was cleared if it still held the text.
        case timeUp
        /// Another program's copy took the clipboard: it is left as it is.
        case replaced
    }

    /// Whether the environment names a display server to serve the clipboard on: a Wayland
    /// compositor (`WAYLAND_DISPLAY`; ``serve(_:environment:seconds:ready:)`` uses it when it offers
    /// data control), or an X server (`DISPLAY`: an X11 session, or XWayland, whose clipboard
    /// GNOME's and KDE's compositors share with Wayland apps).
    package static func hasSession(_ environment: [String: String]) -> Bool {
        !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty || !(environment["DISPLAY"] ?? "").isEmpty
    }

    /// Puts `text` on the clipboard with the hint, calls `ready` once it is there, and serves it
    /// to whoever pastes until `seconds` have passed or another program's copy replaces it.
    ///
    /// - Throws: ``DesktopError`` when no display server can be reached, or it refuses.
    package static func serve(
        _ text: SecretBytes,
        environment: [String: String],
        seconds: Int,
        ready: () -> Void
    ) throws(DesktopError) -> Ending {
        guard text.count <= maximumLength else {
            throw DesktopError(
                .tooLong,
                "the text is \(text.count) bytes long; the clipboard takes at most \(maximumLength)"
            )
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        var waylandProblem: DesktopError?
        if let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
            var served = false
            do {
                return try WaylandClipboard(display: wayland, environment: environment)
                    .serve(text, until: deadline) {
                        served = true
                        ready()
                    }
            } catch {
                // Once the text was on the clipboard, a failure ends serving: it is not put back.
                if served { throw error }
                // A compositor without data control (GNOME's) shares XWayland's clipboard.
                waylandProblem = error
            }
        }
        if let display = environment["DISPLAY"], !display.isEmpty {
            do {
                return try X11Clipboard(display: display, environment: environment)
                    .serve(text, until: deadline, ready: ready)
            } catch {
                let both = [waylandProblem?.description, error.description].compactMap(\.self)
                throw DesktopError(.unreachable, both.joined(separator: "; "))
            }
        }
        throw waylandProblem
            ?? DesktopError(.noSession, "no graphical session: neither WAYLAND_DISPLAY nor DISPLAY is set")
    }

    /// The MIME types (Wayland) and target names (X11) the text is offered as. `STRING` and
    /// plain `text/plain` are Latin-1 by convention, so they are offered only for ASCII text.
    static func textTypes(for text: SecretBytes) -> [String] {
        let ascii = text.withUnsafeBytes { bytes in bytes.allSatisfy { $0 < 0x80 } }
        return ["text/plain;charset=utf-8", "UTF8_STRING", "TEXT"] + (ascii ? ["STRING", "text/plain"] : [])
    }

    /// The hint's value.
    static let secret: [UInt8] = Array("secret".utf8)
}
