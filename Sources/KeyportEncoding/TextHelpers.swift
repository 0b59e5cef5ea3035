import Foundation

/// Percent-encoding for URI components and form bodies: the RFC 3986 unreserved characters stay,
/// everything else (spaces included, as `%20`) is escaped.
public enum PercentEncoding {
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}

/// Comparison whose time depends only on the lengths of what is compared, for codes, states,
/// verifiers and other values an attacker could otherwise guess byte by byte.
public enum ConstantTime {
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    public static func equal(_ a: String, _ b: String) -> Bool { equal(a.utf8, b.utf8) }
}
