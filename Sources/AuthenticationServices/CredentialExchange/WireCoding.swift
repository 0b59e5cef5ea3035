import Foundation
import KeyportEncoding

// Helpers shared by the `Codable` conformances: every type of this module reads and writes the CXF 1.0
// JSON members, whatever Swift names Apple gave the properties.

/// A coding key made from any member name, for types whose members come from a table.
struct WireKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedEncodingContainer {
    /// Binary values are unpadded base64url strings in CXF, whatever the encoder's
    /// `dataEncodingStrategy` says (its default, padded standard base64, is not CXF).
    mutating func encodeBase64URL(_ data: Data, forKey key: Key) throws {
        try encode(Base64URL.encode(data), forKey: key)
    }

    mutating func encodeBase64URLIfPresent(_ data: Data?, forKey key: Key) throws {
        if let data { try encodeBase64URL(data, forKey: key) }
    }

    /// Writes an array only when it has elements: CXF makes these members optional.
    mutating func encodeUnlessEmpty<T: Encodable>(_ values: [T], forKey key: Key) throws {
        if !values.isEmpty { try encode(values, forKey: key) }
    }
}

extension KeyedDecodingContainer {
    /// Bytes from base64url or standard base64, padded or not.
    func decodeBase64URL(forKey key: Key) throws -> Data {
        let text = try decode(String.self, forKey: key)
        do {
            return Data(try Base64URL.decode(text))
        } catch {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: self,
                debugDescription:
                    "'\(key.stringValue)' is not base64url or base64 (\(error)); "
                    + "the exporter wrote bytes CXF cannot carry"
            )
        }
    }

    func decodeBase64URLIfPresent(forKey key: Key) throws -> Data? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeBase64URL(forKey: key)
    }

    /// An identifier. As `CXF.Decoder` does, an id that is not base64url is not an error: real exports
    /// write plain text ids, and the text's UTF-8 bytes then stand for the id.
    func decodeID(forKey key: Key) throws -> Data {
        let text = try decode(String.self, forKey: key)
        if let bytes = try? Base64URL.decode(text) { return Data(bytes) }
        return Data(text.utf8)
    }

    func decodeIDIfPresent(forKey key: Key) throws -> Data? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeID(forKey: key)
    }

    /// An editable field whose `fieldType`, when the exporter left it out, is the one the member calls for.
    func decodeFieldIfPresent(
        forKey key: Key,
        expected: ASImportableEditableField.FieldType
    ) throws -> ASImportableEditableField? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try ASImportableEditableField(from: try superDecoder(forKey: key), expected: expected)
    }

    /// A required array that some exporters leave out: read as empty, as CXF asks.
    func decodeArrayIfPresent<T: Decodable>(_ type: [T].Type, forKey key: Key) throws -> [T] {
        try decodeIfPresent(type, forKey: key) ?? []
    }

    /// The elements of an array that decode; the others are skipped. CXF tells importers to ignore
    /// a credential of an unknown type, an extension they do not know, and a structure whose
    /// required enumerated member has an unknown value, rather than reject the document.
    func decodeLenientArray<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> [T] {
        guard contains(key), try !decodeNil(forKey: key) else { return [] }
        var array = try nestedUnkeyedContainer(forKey: key)
        var out: [T] = []
        while !array.isAtEnd {
            do {
                out.append(try array.decode(T.self))
            } catch is DecodingError {
                // A failed decode leaves the container where it was: step over the element.
                _ = try array.decode(Skipped.self)
            }
        }
        return out
    }
}

/// Any JSON value, read and thrown away.
private struct Skipped: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// Unix seconds (CXF) to and from `Date`.
enum UnixTime {
    static func date(_ seconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }

    /// Whole seconds, rounded toward zero; out-of-range and non-finite dates are clamped (NaN is 0).
    static func seconds(_ date: Date) -> Int64 {
        let t = date.timeIntervalSince1970.rounded(.towardZero)
        if t.isNaN { return 0 }
        if t >= 9_223_372_036_854_775_807.0 { return .max }  // 2^63 as a Double
        if t < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(t)
    }
}
