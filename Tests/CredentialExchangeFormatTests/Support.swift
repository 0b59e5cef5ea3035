import CredentialExchangeFormat
import Foundation
import Testing

enum Fixture {
    static func data(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return try Data(contentsOf: url)
    }

    static func decode(_ name: String) throws -> CXF.DecodedDocument {
        try CXF.Decoder().decode(try data(name))
    }

    /// The base64url test keys made for these fixtures (see keys.json).
    static func key(_ name: String) throws -> Data {
        let keys = try JSONSerialization.jsonObject(with: try data("keys.json")) as! [String: String]
        var text = try #require(keys[name]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(
            of: "_",
            with: "/"
        )
        while text.count % 4 != 0 { text += "=" }
        return try #require(Data(base64Encoded: text))
    }
}

extension CXF.DecodedDocument {
    func codes(_ severity: Diagnostic.Severity? = nil) -> [String] {
        diagnostics.filter { severity == nil || $0.severity == severity }.map(\.code.rawValue)
    }
}

extension Array where Element == Diagnostic {
    func first(_ code: Diagnostic.Code) -> Diagnostic? { first { $0.code == code } }
}

/// Decodes a JSON document given as text, failing the test on a decoding error.
func decode(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> CXF.DecodedDocument {
    try CXF.Decoder().decode(json)
}

/// JSON values compared as Foundation sees them (member order and whitespace ignored).
func sameJSON(_ a: Data, _ b: Data) throws -> Bool {
    let x = try JSONSerialization.jsonObject(with: a) as! NSObject
    let y = try JSONSerialization.jsonObject(with: b) as! NSObject
    return x.isEqual(y)
}
