import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The clipboard on an X server: Keyport's window owns the `CLIPBOARD` selection and answers
/// `SelectionRequest`s itself (ICCCM §2), in the core protocol on the server's Unix socket. When
/// the connection ends, the server drops the ownership of a window that still holds it.
struct X11Clipboard {
    private let socket: DisplaySocket
    /// The first screen's root window, the parent of Keyport's.
    private let root: UInt32
    /// The ids this client may give its resources.
    private let idBase: UInt32
    /// The longest request the server takes, in bytes.
    private let maximumRequest: Int

    // Predefined atoms (X11 protocol, appendix B).
    private static let atomType: UInt32 = 4
    private static let integerType: UInt32 = 19
    private static let stringType: UInt32 = 31
    private static let wmName: UInt32 = 39

    /// Connects to the X server `display` names (`:0`, `unix:0.0`), authenticating with the
    /// `MIT-MAGIC-COOKIE-1` the Xauthority file holds for it, if any.
    init(display: String, environment: [String: String], within time: Duration = .seconds(10)) throws(DesktopError) {
        let parsed = try Self.parse(display)
        let path = "/tmp/.X11-unix/X\(parsed.number)"
        let descriptor: Int32
        do {
            descriptor = try UnixSocketAddress.connect(path)
        } catch {
            // Servers listen in the abstract namespace too, which a sandbox without /tmp keeps.
            let atPath = error
            do {
                descriptor = try UnixSocketAddress.connect(path, abstract: true)
            } catch {
                throw DesktopError(.unreachable, "cannot reach the X server \(display): \(atPath); \(error)")
            }
        }
        socket = DisplaySocket(descriptor: descriptor, name: "the X server \(display)")
        let cookie = XAuthority.cookie(forDisplay: parsed.number, environment: environment)
        var setup: [UInt8] = [0x6C, 0]  // 'l': little-endian
        setup.append16(11)
        setup.append16(0)
        setup.append16(cookie == nil ? 0 : XAuthority.cookieName.count)
        setup.append16(cookie?.count ?? 0)
        setup.append16(0)
        if let cookie {
            setup += XAuthority.cookieName
            setup.pad4()
            setup += cookie
            setup.pad4()
        }
        try socket.write(setup)
        let deadline = ContinuousClock.now + time
        guard try socket.fill(8, until: deadline) else {
            throw DesktopError(.timedOut, "the X server \(display) did not answer")
        }
        let header = socket.peek(8)
        let extra = header.read16(at: 6) * 4
        guard try socket.fill(8 + extra, until: deadline) else {
            throw DesktopError(.timedOut, "the X server \(display) did not answer")
        }
        let reply = socket.take(8 + extra)
        guard reply[0] != 2 else {
            throw DesktopError(
                .unsupported,
                "the X server \(display) asks for more authentication than MIT-MAGIC-COOKIE-1, all Keyport gives"
            )
        }
        guard reply[0] == 1 else {
            let reason = String(decoding: reply[8..<min(reply.count, 8 + Int(reply[1]))], as: UTF8.self)
            throw DesktopError(
                .refused,
                "the X server \(display) refused the connection: \(reason.isEmpty ? "authentication is required" : reason)"
            )
        }
        let body = Array(reply[8...])
        guard body.count >= 32 else {
            throw DesktopError(.protocolError, "the X server \(display) sent a short set-up reply")
        }
        let base = body.read32(at: 4)
        let mask = body.read32(at: 8)
        idBase = base | (1 << UInt32(mask.trailingZeroBitCount))
        maximumRequest = body.read16(at: 18) * 4
        let vendorLength = body.read16(at: 16)
        let formats = Int(body[21])
        let screens = 32 + (vendorLength + 3) / 4 * 4 + formats * 8
        guard body[20] > 0, body.count >= screens + 4 else {
            throw DesktopError(.unsupported, "the X server \(display) has no screen")
        }
        root = body.read32(at: screens)
    }

    /// `[host]:number[.screen]`, with the host empty or `unix`: a server on this machine.
    static func parse(_ display: String) throws(DesktopError) -> (host: String, number: Int) {
        guard let colon = display.lastIndex(of: ":") else {
            throw DesktopError(.noSession, "DISPLAY=\(display) is not an X display (such as :0)")
        }
        let host = String(display[..<colon])
        let rest = display[display.index(after: colon)...]
        guard let number = Int(rest.prefix { $0 != "." }), number >= 0 else {
            throw DesktopError(.noSession, "DISPLAY=\(display) is not an X display (such as :0)")
        }
        guard host.isEmpty || host == "unix" else {
            throw DesktopError(
                .unsupported,
                "DISPLAY=\(display) is an X server over the network; Keyport copies only on this machine's"
            )
        }
        return (host, number)
    }

    /// Owns `CLIPBOARD` with `text`, calls `ready`, and answers requests until `deadline` or until
    /// another client takes the selection.
    func serve(
        _ text: SecretBytes,
        until deadline: ContinuousClock.Instant,
        ready: () -> Void
    ) throws(DesktopError) -> ClipboardOwner.Ending {
        guard text.count + 24 <= maximumRequest else {
            throw DesktopError(
                .tooLong,
                "the X server takes at most \(maximumRequest - 24) bytes at once; the text is \(text.count)"
            )
        }
        let textTypes = ClipboardOwner.textTypes(for: text)
        let names = ["CLIPBOARD", "TARGETS", "TIMESTAMP", ClipboardOwner.passwordManagerHint] + textTypes
        var requests: [UInt8] = []
        for name in names {
            let bytes = Array(name.utf8)
            requests += [16, 0]  // InternAtom, not only-if-exists
            requests.append16(2 + (bytes.count + 3) / 4)
            requests.append16(bytes.count)
            requests.append16(0)
            requests += bytes
            requests.pad4()
        }
        let window = idBase
        // CreateWindow: an input-only 1×1 window at the root, never mapped, told of property changes.
        requests += [1, 0]
        requests.append16(9)
        requests.append32(window)
        requests.append32(root)
        requests.append16(0)
        requests.append16(0)
        requests.append16(1)
        requests.append16(1)
        requests.append16(0)
        requests.append16(2)  // InputOnly
        requests.append32(0)  // CopyFromParent
        requests.append32(0x800)  // event-mask
        requests.append32(0x40_0000)  // PropertyChangeMask
        // Its name, set: the PropertyNotify carries the server time the ownership is taken at (ICCCM
        // §2.1: never CurrentTime).
        let title = Array("Keyport clipboard".utf8)
        title.withUnsafeBytes { bytes in
            changeProperty(
                into: &requests,
                window: window,
                property: Self.wmName,
                type: Self.stringType,
                format: 8,
                data: bytes
            )
        }
        try socket.write(requests)

        let setupDeadline = ContinuousClock.now + .seconds(10)
        var atoms: [String: UInt32] = [:]
        var stamp: UInt32?
        while atoms.count < names.count || stamp == nil {
            guard let packet = try next(until: setupDeadline) else { throw late() }
            switch packet[0] {
            case 0: throw error(packet, doing: "setting up Keyport's window")
            case 1:
                guard atoms.count < names.count else {
                    throw DesktopError(.protocolError, "the X server answered more than was asked")
                }
                atoms[names[atoms.count]] = packet.read32(at: 8)
            case 28 where packet.read32(at: 4) == window: stamp = packet.read32(at: 12)
            default: break
            }
        }
        let clipboard = atoms["CLIPBOARD"]!
        let time = stamp!
        var own: [UInt8] = [22, 0]  // SetSelectionOwner
        own.append16(4)
        own.append32(window)
        own.append32(clipboard)
        own.append32(time)
        own += [23, 0]  // GetSelectionOwner: the one that answers after the change
        own.append16(2)
        own.append32(clipboard)
        try socket.write(own)
        var owner: UInt32?
        while owner == nil {
            guard let packet = try next(until: setupDeadline) else { throw late() }
            switch packet[0] {
            case 0: throw error(packet, doing: "taking the clipboard")
            case 1: owner = packet.read32(at: 8)
            default: break
            }
        }
        guard owner == window else { throw DesktopError(.replaced, "the X server did not give Keyport the clipboard") }
        ready()

        let offered = (["TARGETS", "TIMESTAMP", ClipboardOwner.passwordManagerHint] + textTypes).map { atoms[$0]! }
        while true {
            guard let packet = try next(until: deadline) else { return .timeUp }
            // Exact codes: an event another client sent (SendEvent sets the top bit) is not the
            // server's word that the selection changed hands.
            switch packet[0] {
            case 29 where packet.read32(at: 8) == window && packet.read32(at: 12) == clipboard:
                return .replaced
            case 30 where packet.read32(at: 8) == window:
                let requestor = packet.read32(at: 12)
                let selection = packet.read32(at: 16)
                let target = packet.read32(at: 20)
                // An obsolete client names no property: the target is used (ICCCM §2.2).
                var property = packet.read32(at: 24)
                if property == 0 { property = target }
                // One buffer, sized first, so that the text is never left behind in one the array
                // outgrew; wiped once sent.
                var answer: [UInt8] = []
                answer.reserveCapacity(24 + (text.count + 3) / 4 * 4 + 44)
                var given = selection == clipboard
                if given {
                    func give(_ type: UInt32, _ format: UInt8, _ data: UnsafeRawBufferPointer) {
                        changeProperty(
                            into: &answer,
                            window: requestor,
                            property: property,
                            type: type,
                            format: format,
                            data: data
                        )
                    }
                    switch target {
                    case atoms["TARGETS"]!:
                        var list: [UInt8] = []
                        for atom in offered { list.append32(atom) }
                        list.withUnsafeBytes { give(Self.atomType, 32, $0) }
                    case atoms["TIMESTAMP"]!:
                        var stamp: [UInt8] = []
                        stamp.append32(time)
                        stamp.withUnsafeBytes { give(Self.integerType, 32, $0) }
                    case atoms[ClipboardOwner.passwordManagerHint]!:
                        ClipboardOwner.secret.withUnsafeBytes { give(target, 8, $0) }
                    case atoms["STRING"]:
                        text.withUnsafeBytes { give(Self.stringType, 8, $0) }
                    case let atom where textTypes.contains(where: { atoms[$0] == atom }):
                        // TEXT is answered in UTF-8, a type its requestor may ask for (ICCCM §2.7.1).
                        text.withUnsafeBytes { give(atom == atoms["TEXT"] ? atoms["UTF8_STRING"]! : atom, 8, $0) }
                    default:
                        given = false
                    }
                }
                // SendEvent: SelectionNotify to the requestor, the property None when refused.
                answer += [25, 0]
                answer.append16(11)
                answer.append32(requestor)
                answer.append32(0)
                answer += [31, 0, 0, 0]
                answer.append32(packet.read32(at: 4))
                answer.append32(requestor)
                answer.append32(selection)
                answer.append32(target)
                answer.append32(given ? property : 0)
                answer += [UInt8](repeating: 0, count: 8)
                try socket.write(answer)
                Wipe.bytes(&answer)
            default:
                // Errors now come from requestors that left before their answer (BadWindow): theirs.
                break
            }
        }
    }

    /// Appends a ChangeProperty request (mode Replace) to `request`.
    private func changeProperty(
        into request: inout [UInt8],
        window: UInt32,
        property: UInt32,
        type: UInt32,
        format: UInt8,
        data: UnsafeRawBufferPointer
    ) {
        request += [18, 0]
        request.append16(6 + (data.count + 3) / 4)
        request.append32(window)
        request.append32(property)
        request.append32(type)
        request += [format, 0, 0, 0]
        request.append32(UInt32(data.count / (Int(format) / 8)))
        request += data
        request.pad4()
    }

    /// The next error, reply or event (32 bytes, more for a reply that says so); nil when
    /// `deadline` passes first.
    private func next(until deadline: ContinuousClock.Instant) throws(DesktopError) -> [UInt8]? {
        guard try socket.fill(32, until: deadline) else { return nil }
        let head = socket.peek(32)
        let extra = head.first == 1 ? Int(head.read32(at: 4)) * 4 : 0
        // Keyport asks for nothing long: a reply the size of a request at most.
        guard extra <= 1 << 20 else {
            throw DesktopError(.protocolError, "\(socket.name) sent a reply of \(extra) bytes")
        }
        guard try socket.fill(32 + extra, until: deadline) else { return nil }
        return socket.take(32 + extra)
    }

    private func late() -> DesktopError { DesktopError(.timedOut, "\(socket.name) did not answer in time") }

    private func error(_ packet: [UInt8], doing what: String) -> DesktopError {
        DesktopError(.refused, "the X server refused \(what): error \(packet[1]) on request \(packet[10])")
    }
}
