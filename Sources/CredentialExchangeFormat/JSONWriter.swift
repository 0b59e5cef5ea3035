import KeyportEncoding

import struct Foundation.Data

/// Writes JSON bytes: compact by default, indented when asked. Keys are `StaticString`s the codec
/// owns; values are escaped as RFC 8259 requires and nothing more (no `\/`, no `\u` for non-ASCII).
package struct JSONWriter {
    var out: [UInt8] = []
    let pretty: Bool
    private var first = true
    private var depth = 0

    init(pretty: Bool, capacity: Int = 4096) {
        self.pretty = pretty
        out.reserveCapacity(capacity)
    }

    @inline(__always) private mutating func newline() {
        out.append(0x0A)
        for _ in 0..<depth {
            out.append(0x20)
            out.append(0x20)
        }
    }

    @inline(__always) mutating func beginObject() {
        out.append(UInt8(ascii: "{"))
        first = true
        depth += 1
    }

    @inline(__always) mutating func endObject() {
        depth -= 1
        if pretty && !first { newline() }
        out.append(UInt8(ascii: "}"))
        first = false
    }

    @inline(__always) mutating func beginArray() {
        out.append(UInt8(ascii: "["))
        first = true
        depth += 1
    }

    @inline(__always) mutating func endArray() {
        depth -= 1
        if pretty && !first { newline() }
        out.append(UInt8(ascii: "]"))
        first = false
    }

    /// Writes the separator before an array element.
    @inline(__always) mutating func element() {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        if pretty { newline() }
    }

    /// Writes a member name and the colon; the value follows.
    @inline(__always) mutating func key(_ name: StaticString) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        if pretty { newline() }
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(0x20) }
    }

    private mutating func dynamicKey(_ name: String) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        if pretty { newline() }
        string(name)
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(0x20) }
    }

    // MARK: Scalars

    mutating func string(_ value: String) {
        JSONString.append(value, to: &out)
    }

    mutating func int(_ value: Int64) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            out.append(contentsOf: buffer[(24 - count)...])
        }
    }

    mutating func uint(_ value: UInt64) {
        if value <= UInt64(Int64.max) {
            int(Int64(value))
        } else {
            out.append(contentsOf: String(value).utf8)
        }
    }

    mutating func null() {
        out.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
    }

    mutating func bool(_ value: Bool) {
        if value {
            out.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        } else {
            out.append(contentsOf: [
                UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e"),
            ])
        }
    }

    /// Unpadded base64url.
    mutating func bytes(_ value: Data) {
        out.append(UInt8(ascii: "\""))
        value.withUnsafeBytes { Base64URL.append(contentsOf: $0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: Kept values

    /// Writes the unknown members of an object, every one, in the order they came. Among them are
    /// values of typed members the decoder could not read and repeats of typed members: they are
    /// written back so that nothing the document held is lost (see ``replaces(_:standIn:in:)``).
    mutating func unknownMembers(_ members: [JSONMember]) {
        for member in members {
            dynamicKey(member.key)
            value(member.value)
        }
    }

    /// Writes an optional member when it has a value. Without one, a repeat of the member among
    /// the kept members means its first occurrence was `null` (a first occurrence that could not be
    /// read would be kept too, marked unreadable): that `null` is written in its place, so the
    /// output reads back with the first occurrence first, as the document had it.
    @inline(__always) mutating func optional<T>(
        _ name: StaticString,
        _ value: T?,
        unknown members: [JSONMember],
        _ write: (inout JSONWriter, T) -> Void
    ) {
        if let value {
            key(name)
            write(&self, value)
        } else if !members.isEmpty {
            let kept = Self.kept(name, in: members)
            if kept.repeat && !kept.unreadable {
                key(name)
                null()
            }
        }
    }

    /// What the kept members hold under `key`, in one pass: a value that could not be read, and a
    /// plain kept member (for a key the model types, a repeat).
    @inline(__always) static func kept(
        _ key: StaticString,
        in members: [JSONMember]
    ) -> (unreadable: Bool, repeat: Bool) {
        let name = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        var found = (unreadable: false, repeat: false)
        for member in members where member.key.utf8.elementsEqual(name) {
            if member.unreadable { found.unreadable = true } else { found.repeat = true }
        }
        return found
    }

    /// Whether a required typed member is to be left out because it holds only the decoder's
    /// stand-in for a value that could not be read (``JSONMember/unreadable``), which
    /// ``unknownMembers(_:)`` writes instead. A program that sets the typed member to something
    /// else gets both written: its value is not dropped, and neither is the document's.
    @inline(__always) func replaces(_ key: StaticString, standIn: Bool, in members: [JSONMember]) -> Bool {
        guard standIn, !members.isEmpty else { return false }
        return Self.kept(key, in: members).unreadable
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let s): string(s)
        case .array(let elements):
            beginArray()
            for e in elements {
                element()
                self.value(e)
            }
            endArray()
        case .object(let members):
            beginObject()
            for member in members {
                dynamicKey(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }
}
