import KeyportSystemCore

/// Typing through the desktop's RemoteDesktop portal (`org.freedesktop.portal.RemoteDesktop`), the
/// one way GNOME's and KDE's Wayland sessions let a program type: the portal asks the person
/// whether Keyport may control the keyboard, and then presses keys by their keysym, which the
/// compositor turns into its keymap's keys (Shift included).
///
/// A session is opened, and so the person asked, before the credential is asked for (nobody
/// unlocks a vault for a text that cannot be typed), and closed when the text is typed. Every
/// request's answer is a `Response` signal on the request's object, subscribed to before the call.
package final class RemoteDesktopPortal {
    private let bus: DBusConnection
    private let session: String
    private var closed = false

    private static let portal = "org.freedesktop.portal.Desktop"
    private static let path = "/org/freedesktop/portal/desktop"
    private static let interface = "org.freedesktop.portal.RemoteDesktop"
    private static let keyboard: UInt32 = 1

    /// Opens a session with the keyboard and asks the person (the portal's dialog), waiting up to
    /// `timeout` for their answer.
    ///
    /// - Throws: ``DesktopError`` when there is no portal, it offers no keyboard, or the person
    ///   says no.
    package init(environment: [String: String], timeout: Duration = .seconds(120)) throws(DesktopError) {
        bus = try DBusConnection(environment: environment)
        let available: [DBusValue]
        do {
            available = try bus.call(
                destination: Self.portal,
                path: Self.path,
                interface: "org.freedesktop.DBus.Properties",
                member: "Get",
                [.string(Self.interface), .string("AvailableDeviceTypes")]
            )
        } catch {
            throw DesktopError(
                .unsupported,
                "the desktop has no RemoteDesktop portal (xdg-desktop-portal with GNOME's or KDE's backend): \(error)"
            )
        }
        guard case .variant(_, .uint32(let types)) = available.first, types & Self.keyboard != 0 else {
            throw DesktopError(.unsupported, "the desktop's RemoteDesktop portal offers no keyboard")
        }
        // The portal's own connection, now that the call started it: only it answers requests.
        let owner = try bus.call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "GetNameOwner",
            [.string(Self.portal)]
        )
        guard let portalName = owner.first?.string else {
            throw DesktopError(.unsupported, "the RemoteDesktop portal has no owner")
        }
        let token = "keyport\(UInt32.random(in: 0...UInt32.max))"
        let created = try Self.request(
            bus,
            portalName,
            "CreateSession",
            token: token + "a",
            [.options([("handle_token", .string(token + "a")), ("session_handle_token", .string(token))])],
            timeout: .seconds(30)
        )
        guard let session = created["session_handle"]?.string else {
            throw DesktopError(.unsupported, "the RemoteDesktop portal made no session")
        }
        self.session = session
        do throws(DesktopError) {
            _ = try Self.request(
                bus,
                portalName,
                "SelectDevices",
                token: token + "b",
                [
                    .objectPath(session),
                    .options([("handle_token", .string(token + "b")), ("types", .uint32(Self.keyboard))]),
                ],
                timeout: .seconds(30)
            )
            let started = try Self.request(
                bus,
                portalName,
                "Start",
                token: token + "c",
                [.objectPath(session), .string(""), .options([("handle_token", .string(token + "c"))])],
                timeout: timeout
            )
            guard let devices = started["devices"]?.uint32, devices & Self.keyboard != 0 else {
                throw DesktopError(.declined, "the keyboard was not allowed in the RemoteDesktop portal's dialog")
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Calls the portal's `method` as a request and waits for its `Response`; its results.
    private static func request(
        _ bus: DBusConnection,
        _ portalName: String,
        _ method: String,
        token: String,
        _ arguments: [DBusValue],
        timeout: Duration
    ) throws(DesktopError) -> [String: DBusValue] {
        // The request's object path is known before the call: subscribe first, so that an answer
        // that comes at once is not missed.
        let sender = bus.uniqueName.dropFirst().replacing(".", with: "_")
        let requestPath = "\(Self.path)/request/\(sender)/\(token)"
        try bus.call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "AddMatch",
            [
                .string(
                    "type='signal',interface='org.freedesktop.portal.Request',member='Response',path='\(requestPath)'"
                )
            ]
        )
        let handle = try bus.call(
            destination: portal,
            path: path,
            interface: interface,
            member: method,
            arguments
        )
        let answeredAt = handle.first?.string ?? requestPath
        guard
            let response = try bus.signal(
                path: answeredAt,
                interface: "org.freedesktop.portal.Request",
                member: "Response",
                from: portalName,
                until: .now + timeout
            )
        else {
            throw DesktopError(.timedOut, "the RemoteDesktop portal did not answer \(method) in time")
        }
        switch response.body.first?.uint32 {
        case 0: return response.body.count > 1 ? response.body[1].dictionary : [:]
        case 1:
            throw DesktopError(
                .declined,
                "you did not allow Keyport to type (the RemoteDesktop portal's dialog was cancelled)"
            )
        default: throw DesktopError(.protocolError, "the RemoteDesktop portal ended \(method) without an answer")
        }
    }

    /// Types `text`: each character pressed and released by its keysym.
    ///
    /// - Throws: ``DesktopError`` for a character outside printable ASCII and Tab (none is typed
    ///   then: the compositor drops a keysym its keyboard layout lacks, and says nothing), or when
    ///   the portal refuses a key.
    package func type(_ text: SecretBytes) throws(DesktopError) {
        // The keysyms are the text too: kept in one buffer of their own size, wiped after.
        var keysyms = [UInt32](repeating: 0, count: text.count)
        defer { for index in keysyms.indices { keysyms[index] = 0 } }
        let typable = text.withUnsafeBytes { bytes in
            for (index, byte) in bytes.enumerated() {
                guard byte == 0x09 || (0x20...0x7E).contains(byte) else { return false }
                keysyms[index] = Self.keysym(for: Unicode.Scalar(byte))!
            }
            return true
        }
        guard typable else {
            throw DesktopError(
                .unsupported,
                "the text holds a character other than printable ASCII, which the portal may drop unseen; nothing was typed"
            )
        }
        for keysym in keysyms {
            for state: UInt32 in [1, 0] {
                try bus.call(
                    destination: Self.portal,
                    path: Self.path,
                    interface: Self.interface,
                    member: "NotifyKeyboardKeysym",
                    [.objectPath(session), .options([]), .int32(Int32(bitPattern: keysym)), .uint32(state)]
                )
            }
        }
    }

    /// The X keysym of `character`: Latin-1's printable characters are their own code, every
    /// other Unicode character 0x01000000 plus its code, Tab XK_Tab (X11's keysymdef.h); nil for
    /// any other control character.
    static func keysym(for character: Unicode.Scalar) -> UInt32? {
        switch character.value {
        case 0x09: 0xFF09
        case 0x20...0x7E, 0xA0...0xFF: character.value
        case 0...0x1F, 0x7F...0x9F: nil
        default: 0x0100_0000 + character.value
        }
    }

    /// Ends the session (the portal stops showing that Keyport controls the keyboard).
    package func close() {
        guard !closed else { return }
        closed = true
        _ = try? bus.call(
            destination: Self.portal,
            path: session,
            interface: "org.freedesktop.portal.Session",
            member: "Close",
            timeout: .seconds(5)
        )
    }
}
