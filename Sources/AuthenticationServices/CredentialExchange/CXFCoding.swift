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
// not Base32, another major version) throws `DecodingError.dataCorrupted`. What the coder itself
// decides stays its own: a coder that keeps one value per key (`JSONDecoder`) hides a repeated
// member that `CXF.Decoder` reading the bytes keeps as an error, and numbers come through as the
// coder's `Int64`, `UInt64` or `Double`.

enum CXFCoding {
    /// Reads `part` from `decoder` and converts it with `convert`, which returns `nil` (having
    /// recorded why) when Apple's type cannot hold the value at all.
    static func decode<Value, T>(
        _ part: CXF.Part<Value>,
        from decoder: any Decoder,
        _ convert: (inout CXFImporter, Value) throws -> T?
    ) throws -> T {
        let json = appleSpellings(try JSONValue(from: decoder))
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

    /// `json` with Apple's spelling of a collection's `subCollections`, `subcollections` (what
    /// Apple's decoder is reported to read), renamed to CXF's in every object that lacks CXF's:
    /// `Codable` reads JSON written for Apple's types too. Only here, by presence and never by
    /// order (a coder may keep none): the CXF codec itself reads the specification's name only,
    /// so what it checks is what a reader of the specification reads.
    static func appleSpellings(_ json: JSONValue) -> JSONValue {
        switch json {
        case .array(let elements):
            return .array(elements.map(appleSpellings))
        case .object(let members):
            let hasCXFName = members.contains { $0.key == "subCollections" }
            return .object(
                members.map { member in
                    JSONMember(
                        key: member.key == "subcollections" && !hasCXFName ? "subCollections" : member.key,
                        value: appleSpellings(member.value),
                        unreadable: member.unreadable
                    )
                }
            )
        default:
            return json
        }
    }

    /// Writes `value` as `part`.
    static func encode<Value>(_ part: CXF.Part<Value>, _ value: Value, to encoder: any Encoder) throws {
        try part.encodeJSON(value).encode(to: encoder)
    }
}
