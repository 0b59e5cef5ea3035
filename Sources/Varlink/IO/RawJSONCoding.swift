import Foundation
// Varlink is VarlinkCore (the protocol, without Foundation) with swift-nio's connections and
// Foundation's JSON coders on top; users of Varlink see both.
@_exported import VarlinkCore

extension RawJSON {
    /// Encodes `value` with `JSONEncoder` (keys sorted, so equal values give equal bytes).
    package init(encoding value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.init(bytes: try encoder.encode(value))
    }

    /// Decodes the value with `JSONDecoder`.
    package func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
