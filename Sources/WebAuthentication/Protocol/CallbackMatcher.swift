import Foundation

/// Where an authentication session's callback may arrive, and whether a URL is it. This is the
/// logic of Apple's `ASWebAuthenticationSession.Callback`, plus the loopback redirect RFC 8252
/// asks native apps on desktops to use.
public enum CallbackMatcher: Hashable, Sendable {
    /// A private-use URL scheme (`com.example.app`): the URL's scheme equals it, case-insensitively.
    case customScheme(String)
    /// An https URL on `host` at `path` (host and normalised path compared case-insensitively;
    /// query and fragment ignored).
    case https(host: String, path: String)
    /// The loopback redirect `http://127.0.0.1:PORT/PATH` (or `[::1]`): address, port and path equal.
    case loopback(host: String, port: Int, path: String)

    /// Whether `url` is the callback.
    public func matches(_ url: URL) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme else {
            return false
        }
        switch self {
        case .customScheme(let expected):
            return scheme.lowercased() == expected.lowercased()
        case .https(let host, let path):
            return scheme.lowercased() == "https" && components.host?.lowercased() == host.lowercased()
                && Self.normalise(components.path) == Self.normalise(path)
        case .loopback(let host, let port, let path):
            let urlHost = components.host.map { $0.hasPrefix("[") ? String($0.dropFirst().dropLast()) : $0 }
            let expectedHost = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            return scheme.lowercased() == "http" && urlHost == expectedHost && components.port == port
                && Self.normalise(components.path) == Self.normalise(path)
        }
    }

    /// Lowercased, `.` and `..` resolved, empty path as `/`, no trailing slash beyond the root.
    static func normalise(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.lowercased().split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." {
                _ = parts.popLast()
                continue
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}
