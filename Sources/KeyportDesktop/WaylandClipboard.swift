import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The clipboard on a Wayland compositor through its data-control protocol
/// (`ext_data_control_manager_v1`, or wlroots' `zwlr_data_control_manager_v1` with the same
/// requests and events): a source that offers the text's types and the hint, set as the seat's
/// selection without a window or keyboard focus. The compositor tells the source when another copy
/// replaces it (`cancelled`); when the connection ends it destroys the source, and with it the
/// selection if the source still was the selection.
///
/// GNOME's compositor offers no data control: there the X server of XWayland serves instead
/// (``ClipboardOwner``).
struct WaylandClipboard {
    private let socket: DisplaySocket

    // Object ids, given by this client in the order it makes them (wl_display is 1).
    private static let display: UInt32 = 1
    private static let registry: UInt32 = 2
    private static let firstSync: UInt32 = 3
    private static let seat: UInt32 = 4
    private static let manager: UInt32 = 5
    private static let source: UInt32 = 6
    private static let device: UInt32 = 7
    private static let secondSync: UInt32 = 8

    /// The data-control managers, preferred first.
    private static let managers = ["ext_data_control_manager_v1", "zwlr_data_control_manager_v1"]

    /// Connects to the compositor `display` names: a socket in `XDG_RUNTIME_DIR`, or a path.
    init(display: String, environment: [String: String]) throws(DesktopError) {
        let path: String
        if display.hasPrefix("/") {
            path = display
        } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            path = runtime + "/" + display
        } else {
            throw DesktopError(
                .noSession,
                "WAYLAND_DISPLAY=\(display) names a socket in XDG_RUNTIME_DIR, which is not set"
            )
        }
        do {
            socket = DisplaySocket(descriptor: try UnixSocketAddress.connect(path), name: "the Wayland compositor")
        } catch {
            throw DesktopError(.unreachable, "cannot reach the Wayland compositor: \(error)")
        }
    }

    /// Sets the selection to `text`, calls `ready` once the compositor has it, and serves it
    /// until `deadline` or until another copy replaces it.
    func serve(
        _ text: SecretBytes,
        until deadline: ContinuousClock.Instant,
        ready: () -> Void
    ) throws(DesktopError) -> ClipboardOwner.Ending {
        try socket.write(
            message(Self.display, 1, new(Self.registry)) + message(Self.display, 0, new(Self.firstSync))
        )
        let setupDeadline = ContinuousClock.now + .seconds(10)
        var seat: (name: UInt32, version: UInt32)?
        var manager: (name: UInt32, interface: String)?
        while true {
            guard let event = try next(until: setupDeadline) else { throw late() }
            if event.object == Self.firstSync { break }
            if event.object == Self.display, event.opcode == 0 { throw refusal(event.body) }
            guard event.object == Self.registry, event.opcode == 0 else { continue }
            // wl_registry.global(name, interface, version)
            var reader = Reader(event.body)
            guard let name = reader.uint(), let interface = reader.string(), let version = reader.uint() else {
                throw DesktopError(.protocolError, "the Wayland compositor sent a global Keyport cannot read")
            }
            if interface == "wl_seat", seat == nil { seat = (name, version) }
            if let rank = Self.managers.firstIndex(of: interface),
                manager.map({ Self.managers.firstIndex(of: $0.interface)! > rank }) ?? true
            {
                manager = (name, interface)
            }
        }
        guard let manager else {
            throw DesktopError(
                .unsupported,
                "the Wayland compositor offers no data control (ext-data-control or wlr-data-control)"
            )
        }
        guard let seat else { throw DesktopError(.unsupported, "the Wayland compositor has no seat") }

        let types = ClipboardOwner.textTypes(for: text) + [ClipboardOwner.passwordManagerHint]
        var requests = message(Self.registry, 0, bind(seat.name, "wl_seat", 1, Self.seat))
        requests += message(Self.registry, 0, bind(manager.name, manager.interface, 1, Self.manager))
        requests += message(Self.manager, 0, new(Self.source))  // create_data_source
        for type in types { requests += message(Self.source, 0, string(type)) }  // offer
        requests += message(Self.manager, 1, new(Self.device) + new(Self.seat))  // get_data_device
        requests += message(Self.device, 0, new(Self.source))  // set_selection
        requests += message(Self.display, 0, new(Self.secondSync))
        try socket.write(requests)

        var isReady = false
        while true {
            guard let event = try next(until: isReady ? deadline : setupDeadline) else {
                if isReady { return .timeUp }
                throw late()
            }
            switch (event.object, event.opcode) {
            case (Self.display, 0):
                throw refusal(event.body)
            case (Self.secondSync, 0):
                isReady = true
                ready()
            case (Self.source, 0):
                // send(mime_type, fd): the text, or the hint, written into the descriptor.
                var reader = Reader(event.body)
                let type = reader.string()
                guard let descriptor = socket.takeDescriptor() else {
                    throw DesktopError(
                        .protocolError,
                        "the Wayland compositor asked for the text without a descriptor to write it to"
                    )
                }
                if type == ClipboardOwner.passwordManagerHint {
                    Self.deliver(ClipboardOwner.secret, to: descriptor)
                } else if let type, types.contains(type) {
                    text.withUnsafeBytes { Self.deliver($0, to: descriptor) }
                }
                close(descriptor)
            case (Self.source, 1):
                guard isReady else {
                    throw DesktopError(.replaced, "another program's copy replaced Keyport's at once")
                }
                return .replaced
            case (Self.device, 0):
                // data_offer(id): the compositor's offer of a selection (Keyport's own among
                // them), not read here; destroyed so that it does not pile up.
                var reader = Reader(event.body)
                if let offer = reader.uint() { try socket.write(message(offer, 1, [])) }
            case (Self.device, 2):
                throw DesktopError(.replaced, "the Wayland compositor ended Keyport's clipboard device")
            default:
                break
            }
        }
    }

    /// Writes `bytes` to a paster's pipe without waiting on it for long: a paster that does not
    /// read gets less, and Keyport goes on serving.
    private static func deliver(_ bytes: some Collection<UInt8>, to descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        var data = Array(bytes)
        defer { Wipe.bytes(&data) }
        var written = 0
        let giveUp = ContinuousClock.now + .seconds(1)
        while written < data.count, ContinuousClock.now < giveUp {
            let count = data.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count > 0 {
                written += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                var wait = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&wait, 1, 100)
            } else {
                return
            }
        }
    }

    /// Returns once the compositor has answered a `wl_display.sync`: it serves this client.
    func roundTrip(until deadline: ContinuousClock.Instant) throws(DesktopError) {
        try socket.write(message(Self.display, 0, new(Self.firstSync)))
        while true {
            guard let event = try next(until: deadline) else { throw late() }
            if event.object == Self.firstSync { return }
            if event.object == Self.display, event.opcode == 0 { throw refusal(event.body) }
        }
    }

    /// A request: the object, the size and opcode, the arguments.
    private func message(_ object: UInt32, _ opcode: Int, _ arguments: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append32(object)
        bytes.append32(UInt32(8 + arguments.count) << 16 | UInt32(opcode))
        return bytes + arguments
    }

    private func new(_ id: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append32(id)
        return bytes
    }

    /// A string argument: its length with the NUL, the bytes, the NUL, padding.
    private func string(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append32(UInt32(text.utf8.count + 1))
        bytes += text.utf8
        bytes.append(0)
        bytes.pad4()
        return bytes
    }

    /// wl_registry.bind's arguments: a new id whose interface the request names.
    private func bind(_ name: UInt32, _ interface: String, _ version: UInt32, _ id: UInt32) -> [UInt8] {
        new(name) + string(interface) + new(version) + new(id)
    }

    /// The next event, or nil when `deadline` passes first.
    private func next(
        until deadline: ContinuousClock.Instant
    ) throws(DesktopError) -> (object: UInt32, opcode: Int, body: [UInt8])? {
        guard try socket.fill(8, until: deadline) else { return nil }
        let header = socket.peek(8)
        let word = header.read32(at: 4)
        let size = Int(word >> 16)
        guard size >= 8, size % 4 == 0 else {
            throw DesktopError(.protocolError, "the Wayland compositor sent an event Keyport cannot read")
        }
        guard try socket.fill(size, until: deadline) else { return nil }
        let bytes = socket.take(size)
        return (bytes.read32(at: 0), Int(word & 0xFFFF), Array(bytes[8...]))
    }

    private func late() -> DesktopError { DesktopError(.timedOut, "the Wayland compositor did not answer in time") }

    /// wl_display.error(object, code, message), said.
    private func refusal(_ body: [UInt8]) -> DesktopError {
        var reader = Reader(body)
        _ = reader.uint()
        _ = reader.uint()
        return DesktopError(.refused, "the Wayland compositor refused: \(reader.string() ?? "no reason given")")
    }

    /// Reads an event's arguments in order.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func uint() -> UInt32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return bytes.read32(at: offset)
        }

        mutating func string() -> String? {
            guard let length = uint().map(Int.init), length > 0, offset + length <= bytes.count else { return nil }
            defer { offset += (length + 3) / 4 * 4 }
            return String(decoding: bytes[offset..<offset + length - 1], as: UTF8.self)
        }
    }
}
