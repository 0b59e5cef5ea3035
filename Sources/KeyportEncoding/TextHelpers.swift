/// Percent-encoding for URI components and form bodies: the RFC 3986 unreserved characters stay,
/// everything else (spaces included, as `%20`) is escaped, byte by byte of its UTF-8.
package enum PercentEncoding {
    package static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with every `%XX` escape replaced by its byte; `nil` when a `%` is not followed by two
    /// hex digits or the bytes are not UTF-8 (what Foundation's `removingPercentEncoding` does,
    /// without its trip through UTF-16, which dominated reading 100 000 TOTP URIs).
    @inlinable
    package static func unescape(_ text: some StringProtocol) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = bytes.next().flatMap(Hex.value), let low = bytes.next().flatMap(Hex.value) else {
                return nil
            }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }
}

extension StringProtocol {
    /// The text without the white space (and, unless `newlines` is false, the line breaks) at its
    /// ends: what Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)` (or
    /// `.whitespaces`) does, without its trip through UTF-16. White space is Foundation's set:
    /// space, tab, U+00A0, U+1680, U+2000–U+200B, U+202F, U+205F and U+3000; line breaks are
    /// U+000A–U+000D, U+0085, U+2028 and U+2029.
    @inlinable
    package func trimmingWhitespace(newlines: Bool = true) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x20, 0x09, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
            case 0x0A...0x0D, 0x85, 0x2028, 0x2029: newlines
            default: false
            }
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        // The scalar view's indices are the text's: its UTF-8 between them is copied at once.
        return String(decoding: utf8[first..<scalars.index(after: last)], as: UTF8.self)
    }
}

/// Comparison whose time depends only on the lengths of what is compared, for codes, states,
/// verifiers and other values an attacker could otherwise guess byte by byte.
package enum ConstantTime {
    package static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    package static func equal(_ a: String, _ b: String) -> Bool { equal(a.utf8, b.utf8) }
}

/// Text from a document made safe to show on a terminal: control characters (C0, DEL, C1), the
/// line and paragraph separators, the bidirectional marks, embeddings, overrides and isolates, and
/// the other invisible format characters but the zero-width joiner are written as `\u{1B}`. A value can then neither send escape sequences to the terminal (erase
/// a line, move the cursor, retitle the window) nor start a line of its own or reorder what is
/// printed around it ("Trojan Source"). Everything else, non-ASCII letters included, is kept.
package enum DisplayText {
    package static func escaping(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A value a caller or a site chose, in a question the person reads: quoted, and cut to 64
    /// characters, so that it cannot pass for the rest of the sentence.
    package static func quoted(_ text: String) -> String {
        "“" + (text.count > 64 ? text.prefix(63) + "…" : text) + "”"
    }

    /// The start of `text`, at most `limit` bytes of UTF-8 cut at a scalar (a run of combining
    /// marks is one character of any length: the cut is by bytes), followed by "…" when cut; not
    /// escaped. For what another process wrote into a question the person reads: it cannot push
    /// the rest of the question off the screen.
    package static func excerpt(_ text: String, bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var shown = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            count += UTF8.width(scalar)
            guard count <= limit else { break }
            shown.append(scalar)
        }
        return String(shown) + "…"
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true  // C0, DEL, C1
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi controls
        case 0x2028, 0x2029: true  // line and paragraph separators
        // Other invisible format characters (zero-width spaces, word joiners, tags, the byte-order
        // mark), which can hide text or make one string look like another; the zero-width joiner
        // stays, as emoji are written with it.
        case 0x200D: false
        default: scalar.properties.generalCategory == .format
        }
    }
}
