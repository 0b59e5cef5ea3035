import CredentialExchangeFormat
import Foundation

// `Codable` for Apple's types goes through the CXF codec: `init(from:)` takes the JSON the decoder
// holds, reads it as the matching part of a CXF document with `CXF.Decoder`'s rules (the defaults for
// missing members, the spellings it accepts, what a credential must hold) and converts the result as
// an import does (`CXFImporter`); `encode(to:)` converts to the CXF model and writes what
// `CXF.Encoder` writes. So a `JSONDecoder` and `ASCredentialImportManager` read a document the same
// way, and no second reader restates the codec's rules.
//
// Consequences worth knowing: dates are CXF's Unix seconds whatever the coder's date strategy; bytes
// are unpadded base64url whatever its data strategy; what Apple's types cannot hold is left out as
// `ASExportedCredentialData.init(cxf:omissions:)` reports it, silently here; a value that is not the
// part at all (not an object, a credential without a usable required member, a TOTP secret that is
// not Base32, another major version) throws `DecodingError.dataCorrupted`.

enum CXFCoding {
    /// Reads `part` from `decoder` and converts it with `convert`, which returns `nil` (having
    /// recorded why) when Apple's type cannot hold the value at all.
    static func decode<Value, T>(
        _ part: CXF.Part<Value>,
        from decoder: any Decoder,
        _ convert: (inout CXFImporter, Value) throws -> T?
    ) throws -> T {
        let json = try JSONValue(from: decoder)
        let value: Value
        do {
            value = try CXF.Decoder().decode(part, from: json)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.message, underlyingError: error)
            )
        }
        var importer = CXFImporter()
        let converted: T?
        do {
            converted = try convert(&importer, value)
        } catch DecodingError.dataCorrupted(let context) {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath + context.codingPath, debugDescription: context.debugDescription)
            )
        }
        guard let converted else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: importer.omissions.last?.reason ?? "the value cannot be imported"
                )
            )
        }
        return converted
    }

    /// Writes `value` as `part`.
    static func encode<Value>(_ part: CXF.Part<Value>, _ value: Value, to encoder: any Encoder) throws {
        try part.encodeJSON(value).encode(to: encoder)
    }
}
