/// The rule for a private-use URL scheme a sign-in callback may come to (RFC 8252 §7.1): what
/// WebAuthentication registers with the desktop and keyportd routes, checked in one place.
package enum PrivateURLScheme {
    /// Schemes browsers and the system handle themselves, which Keyport never takes over.
    package static let reserved: Set<String> = [
        "http", "https", "file", "ftp", "mailto", "data", "javascript", "about",
    ]

    /// The longest scheme accepted (the `.desktop` file name must stay within 255 bytes).
    package static let maximumLength = 200

    /// Why a name is not a scheme Keyport takes.
    package struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// `name` lowercased (schemes are case-insensitive; the desktop's MIME types are lowercase),
    /// when it is a letter followed by letters, digits, `+`, `-` or `.` (RFC 3986 §3.1), ASCII
    /// only, at most ``maximumLength`` long and not ``reserved``; else what is wrong, naming the
    /// offending character and its position.
    package static func check(_ name: String) -> Result<String, Problem> {
        func problem(_ text: String) -> Result<String, Problem> { .failure(Problem(description: text)) }
        guard let first = name.unicodeScalars.first else {
            return problem("the URL scheme is empty; give a name such as com.example.app")
        }
        guard name.unicodeScalars.count <= maximumLength else {
            return problem(
                "the URL scheme is \(name.unicodeScalars.count) characters long; at most \(maximumLength) are accepted"
            )
        }
        guard isLetter(first) else {
            return problem(
                "'\(name)' is not a URL scheme: it starts with \(describe(first)); a scheme starts with a letter (RFC 3986 §3.1)"
            )
        }
        for (offset, scalar) in name.unicodeScalars.enumerated()
        where !(isLetter(scalar) || ("0"..."9").contains(scalar) || "+-.".unicodeScalars.contains(scalar)) {
            let hint = scalar == ":" || scalar == "/" ? " Give the scheme alone, without ':' or '//'." : ""
            return problem(
                "'\(name)' is not a URL scheme: \(describe(scalar)) at position \(offset + 1) is not allowed; a scheme is a letter followed by letters, digits, '+', '-' or '.' (RFC 3986 §3.1).\(hint)"
            )
        }
        let lowered = name.lowercased()
        guard !reserved.contains(lowered) else {
            return problem(
                "'\(lowered)' is a scheme browsers and the system handle themselves; Keyport will not take it over. Use a private-use scheme named after a domain you control, such as com.example.app (RFC 8252 §7.1)"
            )
        }
        return .success(lowered)
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// `'x'`, or the code point for what does not print.
    private static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        if scalar.properties.generalCategory == .control || scalar.properties.isWhitespace {
            return code + (scalar == " " ? " (a space)" : "")
        }
        return "'\(scalar)' (\(code))"
    }
}
