import Foundation
import KeyportDomainsCore
import KeyportEncoding

// The pure half of ``SchemeRegistration``: scheme names, the `.desktop` entry's text and the
// `mimeapps.list` edit, with no file or program touched (tested without a desktop).
extension SchemeRegistration {
    // MARK: - Names

    /// Checks a scheme name and returns it lowercased (schemes are case-insensitive; the desktop's
    /// MIME types are lowercase).
    ///
    /// A scheme is a letter followed by letters, digits, `+`, `-` or `.` (RFC 3986 §3.1), ASCII
    /// only. Reverse-DNS names are recommended but a dot is not required.
    ///
    /// - Throws: ``SchemeCallbackError`` `.invalidScheme`, naming the offending character and its
    ///   position, or saying the scheme is one browsers handle themselves.
    public static func validate(scheme: String) throws(SchemeCallbackError) -> String {
        switch PrivateURLScheme.check(scheme) {
        case .success(let scheme): return scheme
        case .failure(let problem): throw SchemeCallbackError(.invalidScheme, problem.description)
        }
    }

    /// `keyport-url-NAME.desktop`: the desktop file ID for a (validated, lowercased) scheme.
    public static func desktopFileName(for scheme: String) -> String {
        "keyport-url-\(scheme).desktop"
    }

    // MARK: - The desktop entry

    /// The `.desktop` file that makes `handlerCommand`, followed by the URL, the handler for
    /// `scheme`.
    ///
    /// - Throws: ``SchemeCallbackError`` `.invalidScheme`; `.registrationFailed` when the command is
    ///   empty or holds a control character (which an `Exec` line cannot carry).
    public static func desktopEntry(scheme: String, handlerCommand: [String]) throws(SchemeCallbackError) -> String {
        let scheme = try validate(scheme: scheme)
        let exec = try execLine(handlerCommand)
        return """
            [Desktop Entry]
            Type=Application
            Name=Keyport sign-in callback (\(scheme))
            Comment=Hands \(scheme): URLs to the Keyport session waiting for them
            NoDisplay=true
            Terminal=false
            Exec=\(exec) %u
            MimeType=x-scheme-handler/\(scheme);

            """
    }

    /// The `Exec` value for a command, quoted as the Desktop Entry Specification ("The Exec key")
    /// says: an argument holding a reserved character is put in double quotes, with `"`, `` ` ``,
    /// `$` and `\` escaped by a backslash inside them; `%` is written `%%`; and then, the value being
    /// a string, each backslash is doubled once more.
    ///
    /// - Throws: ``SchemeCallbackError`` `.registrationFailed` for an empty command or an argument
    ///   with a control character.
    public static func execLine(_ command: [String]) throws(SchemeCallbackError) -> String {
        guard let program = command.first, !program.isEmpty else {
            throw SchemeCallbackError(.registrationFailed, "the handler command is empty")
        }
        var words: [String] = []
        for argument in command {
            if argument.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw SchemeCallbackError(
                    .registrationFailed,
                    "the handler command has an argument with a control character (a newline or tab?), which a .desktop file cannot carry"
                )
            }
            words.append(quoteExecArgument(argument))
        }
        // String-level escaping of the whole value, applied after the quoting rule.
        return words.joined(separator: " ").replacingOccurrences(of: "\\", with: "\\\\")
    }

    /// Characters the spec reserves: an argument holding one (or an empty one) must be quoted.
    private static let reserved: Set<Character> = [
        " ", "\t", "\n", "\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`",
    ]

    private static func quoteExecArgument(_ argument: String) -> String {
        let percent = argument.replacingOccurrences(of: "%", with: "%%")
        guard percent.isEmpty || percent.contains(where: { reserved.contains($0) }) else { return percent }
        var quoted = "\""
        for character in percent {
            if character == "\"" || character == "`" || character == "$" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    // MARK: - mimeapps.list

    /// `mimeapps.list` without `desktopFile` in the lines for `mimeType`, in every group (Default
    /// Applications, Added Associations); a line left with no application is dropped. Everything
    /// else is kept as it was.
    static func removingAssociation(
        from text: String,
        mimeType: String,
        desktopFile: String
    ) -> (text: String, changed: Bool) {
        var changed = false
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let equals = line.firstIndex(of: "="),
                line[..<equals].trimmingWhitespace(newlines: false) == mimeType
            else {
                lines.append(line)
                continue
            }
            let applications = line[line.index(after: equals)...].split(separator: ";")
                .map { $0.trimmingWhitespace(newlines: false) }
            let kept = applications.filter { !$0.isEmpty && $0 != desktopFile }
            guard kept.count != applications.filter({ !$0.isEmpty }).count else {
                lines.append(line)
                continue
            }
            changed = true
            if !kept.isEmpty { lines.append(Substring("\(mimeType)=\(kept.joined(separator: ";"));")) }
        }
        return (lines.joined(separator: "\n"), changed)
    }
}
