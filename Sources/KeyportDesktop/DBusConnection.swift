import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to the person's D-Bus session bus, enough for the desktop portals: the
/// `EXTERNAL` authentication (the kernel vouches for the user), method calls answered in order,
/// and the signals a portal's requests answer with. Blocking, one caller, as `keyport type` is.
final class DBusConnection {
    /// A message read from the bus.
    struct Message {
        var type: UInt8
        var serial: UInt32
        var replySerial: UInt32?
        var path: String?
        var interface: String?
        var member: String?
        var errorName: String?
        /// The unique name of the connection that sent it, as the bus daemon writes it.
        var sender: String?
        var body: [DBusValue]
    }

    private let socket: DisplaySocket
    private var serial: UInt32 = 0
    /// Signals read while waiting for a reply, in the order they came.
    private var signals: [Message] = []
    /// The name the bus gave this connection (`:1.42`).
    private(set) var uniqueName = ""

    private static let methodCall: UInt8 = 1
    private static let methodReturn: UInt8 = 2
    private static let error: UInt8 = 3
    private static let signal: UInt8 = 4
    /// The longest message read.
    private static let maximumMessage = 1 << 20

    /// Connects to the bus `DBUS_SESSION_BUS_ADDRESS` names (`unix:path=…` or `unix:abstract=…`,
    /// the first of them that answers), authenticates, and says Hello.
    init(environment: [String: String]) throws(DesktopError) {
        guard let addresses = environment["DBUS_SESSION_BUS_ADDRESS"], !addresses.isEmpty else {
            throw DesktopError(.noSession, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        var connected: Int32?
        var problems: [String] = []
        for address in addresses.split(separator: ";") where address.hasPrefix("unix:") {
            var keys: [Substring: String] = [:]
            for pair in address.dropFirst(5).split(separator: ",") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                keys[pair[..<equals]] = Self.unescape(pair[pair.index(after: equals)...])
            }
            do {
                if let path = keys["path"] {
                    connected = try UnixSocketAddress.connect(path)
                } else if let name = keys["abstract"] {
                    connected = try UnixSocketAddress.connect(name, abstract: true)
                } else {
                    problems.append("\(address): no path")
                }
            } catch {
                problems.append(error.description)
            }
            if connected != nil { break }
        }
        guard let connected else {
            throw DesktopError(
                .unreachable,
                "cannot reach the D-Bus session bus at \(addresses): \(problems.joined(separator: "; "))"
            )
        }
        socket = DisplaySocket(descriptor: connected, name: "the D-Bus session bus")
        let deadline = ContinuousClock.now + .seconds(10)
        let uid = Array(String(getuid()).utf8).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return [digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        }.joined()
        try socket.write([0] + Array("AUTH EXTERNAL ".utf8) + uid + [13, 10])
        guard let answer = try socket.readLine(until: deadline) else {
            throw DesktopError(.timedOut, "the D-Bus session bus did not answer")
        }
        guard answer.hasPrefix("OK ") else {
            throw DesktopError(.refused, "the D-Bus session bus refused Keyport: \(answer)")
        }
        try socket.write(Array("BEGIN\r\n".utf8))
        let hello = try call(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "Hello"
        )
        guard let name = hello.first?.string, name.hasPrefix(":") else {
            throw DesktopError(.protocolError, "the D-Bus session bus gave Keyport no name")
        }
        uniqueName = name
    }

    /// A bus address's value, its `%XX` escapes undone.
    private static func unescape(_ value: Substring) -> String {
        var bytes: [UInt8] = []
        var rest = value.utf8[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), rest.count >= 2,
                let escaped = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(escaped)
                rest = rest.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Calls a method and waits for its reply's values.
    ///
    /// - Throws: ``DesktopError`` with the error the method answered, or when the bus closes or
    ///   `timeout` passes first.
    @discardableResult
    func call(
        destination: String,
        path: String,
        interface: String,
        member: String,
        _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(30)
    ) throws(DesktopError) -> [DBusValue] {
        serial += 1
        let sent = serial
        var body = DBusWriter()
        for argument in arguments { body.write(argument) }
        var fields: [DBusValue] = [
            .structure([.byte(1), .variant("o", .objectPath(path))]),
            .structure([.byte(2), .variant("s", .string(interface))]),
            .structure([.byte(3), .variant("s", .string(member))]),
            .structure([.byte(6), .variant("s", .string(destination))]),
        ]
        if !arguments.isEmpty {
            fields.append(
                .structure([.byte(8), .variant("g", .signature(arguments.map(DBusValue.signature(of:)).joined()))])
            )
        }
        var message = DBusWriter()
        for value: DBusValue in [
            .byte(UInt8(ascii: "l")), .byte(Self.methodCall), .byte(0), .byte(1),
            .uint32(UInt32(body.bytes.count)), .uint32(sent), .array("(yv)", fields),
        ] {
            message.write(value)
        }
        message.align(8)
        try socket.write(message.bytes + body.bytes)
        let deadline = ContinuousClock.now + timeout
        while true {
            guard let reply = try next(until: deadline) else {
                throw DesktopError(.timedOut, "\(destination) did not answer \(member) in time")
            }
            if reply.type == Self.signal {
                // Kept for signal(path:…), a bounded number: the portal sends one per request.
                if signals.count < 64 { signals.append(reply) }
                continue
            }
            guard reply.replySerial == sent else { continue }
            if reply.type == Self.error {
                let said = reply.body.first?.string.map { ": \($0)" } ?? ""
                throw DesktopError(.refused, "\(member) failed with \(reply.errorName ?? "an error")\(said)")
            }
            return reply.body
        }
    }

    /// Waits for the signal `member` of `interface` on `path` from `sender` (a unique name:
    /// another client of the bus cannot answer for the portal); nil when `deadline` passes first.
    func signal(
        path: String,
        interface: String,
        member: String,
        from sender: String,
        until deadline: ContinuousClock.Instant
    ) throws(DesktopError) -> Message? {
        let matches = { (message: Message) in
            message.path == path && message.interface == interface && message.member == member
                && message.sender == sender
        }
        if let index = signals.firstIndex(where: matches) { return signals.remove(at: index) }
        while let message = try next(until: deadline) {
            if message.type == Self.signal, matches(message) { return message }
        }
        return nil
    }

    /// The next message; nil when `deadline` passes first. A big-endian message (another client
    /// of the bus may send one) is passed over: the bus daemon and the portals write
    /// little-endian on the machines Keyport runs on.
    private func next(until deadline: ContinuousClock.Instant) throws(DesktopError) -> Message? {
        while true {
            guard try socket.fill(16, until: deadline) else { return nil }
            let fixed = Array(socket.peek(16))
            let bigEndian = fixed[0] == UInt8(ascii: "B")
            guard bigEndian || fixed[0] == UInt8(ascii: "l") else {
                throw DesktopError(.protocolError, "the D-Bus session bus sent a message Keyport cannot read")
            }
            func length(at offset: Int) -> Int {
                let value = fixed.read32(at: offset)
                return Int(bigEndian ? value.byteSwapped : value)
            }
            let bodyLength = length(at: 4)
            let fieldsLength = length(at: 12)
            let headerLength = (16 + fieldsLength + 7) / 8 * 8
            guard fieldsLength <= Self.maximumMessage, bodyLength <= Self.maximumMessage else {
                throw DesktopError(
                    .protocolError,
                    "the D-Bus session bus sent a message larger than \(Self.maximumMessage) bytes"
                )
            }
            guard try socket.fill(headerLength + bodyLength, until: deadline) else { return nil }
            let bytes = socket.take(headerLength + bodyLength)
            if !bigEndian { return try parse(bytes, fixed: fixed, headerLength: headerLength) }
        }
    }

    /// A little-endian message's header fields and body.
    private func parse(_ bytes: [UInt8], fixed: [UInt8], headerLength: Int) throws(DesktopError) -> Message {
        do {
            var reader = DBusReader(bytes, offset: 12)
            var message = Message(type: fixed[1], serial: fixed.read32(at: 8), body: [])
            var signature = ""
            if case .array(_, let fields) = try reader.read("a(yv)") {
                for case .structure(let field) in fields {
                    guard case .byte(let code) = field.first, case .variant(_, let value) = field.last else { continue }
                    switch code {
                    case 1: message.path = value.string
                    case 2: message.interface = value.string
                    case 3: message.member = value.string
                    case 4: message.errorName = value.string
                    case 5: message.replySerial = value.uint32
                    case 7: message.sender = value.string
                    case 8: if case .signature(let text) = value { signature = text }
                    default: break
                    }
                }
            }
            var body = DBusReader(bytes, offset: headerLength)
            message.body = try body.read(signature: signature)
            return message
        } catch {
            throw DesktopError(
                .protocolError,
                "the D-Bus session bus sent a message Keyport cannot read: \(error.description)"
            )
        }
    }
}
