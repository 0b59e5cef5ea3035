import Foundation
import KeyportEncoding

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
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme
        else {
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

extension CallbackMatcher {
    /// A filter that accepts a callback only when it returns the `state` that `authorizationURL`
    /// sent (compared in constant time). A URL that sends no state accepts every callback.
    ///
    /// Receivers use it to refuse, and keep waiting past, a callback from another sign-in attempt
    /// or a forged one, instead of letting it end the session.
    public static func stateFilter(for authorizationURL: URL) -> @Sendable (URL) -> Bool {
        guard let sent = queryValue("state", in: authorizationURL) else { return { _ in true } }
        let expected = OAuthSecretValue(rawValue: sent)
        return { callback in
            guard let returned = queryValue("state", in: callback) ?? fragmentValue("state", in: callback) else {
                return false
            }
            return OAuthSecretValue(rawValue: returned) == expected
        }
    }

    static func queryValue(_ name: String, in url: URL) -> String? {
        formValue(name, in: URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
    }

    /// Implicit-style responses carry their parameters in the fragment; custom-scheme callbacks see it.
    static func fragmentValue(_ name: String, in url: URL) -> String? {
        formValue(name, in: URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedFragment)
    }

    /// The first value of `name` in form-encoded text (`a=1&b=x+y`): redirect parameters are
    /// `application/x-www-form-urlencoded` (RFC 6749 §4.1.2), so `+` is a space.
    static func formValue(_ name: String, in encoded: String?) -> String? {
        guard let encoded else { return nil }
        for pair in encoded.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? {
                PercentEncoding.unescape(text.replacingOccurrences(of: "+", with: " "))
            }
            if decode(parts[0]) == name { return parts.count == 2 ? decode(parts[1]) : "" }
        }
        return nil
    }
}
