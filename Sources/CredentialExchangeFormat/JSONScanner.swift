import KeyportEncoding

/// Why scanning stopped: Keyport's one JSON reader's failure (KeyportEncoding). `fatal` carries a
/// ``CXFDecodingError/Code``'s name; `malformed` (a credential that cannot be typed, kept verbatim
/// with an error) and `unsupported` (a credential using a value this version does not know, kept
/// verbatim with a warning) are caught where an element can be kept verbatim instead.
package typealias ScanFailure = JSONReadFailure

/// The decoder's cursor: Keyport's one JSON reader.
typealias JSONScanner = JSONReader

extension JSONReadFailure {
    /// A failure of one of ``CXFDecodingError``'s codes.
    static func fatal(_ code: CXFDecodingError.Code, offset: Int, message: String) -> JSONReadFailure {
        .fatal(code: code.rawValue, offset: offset, message: message)
    }
}

extension DocumentDecoder {
    /// Accounts for `bytes` of model about to be built, and refuses a document whose model would
    /// outgrow its budget. Every object, element and kept value pays its inline size here, so a
    /// document dense with tiny objects (`"items":[{},{},…]`) is refused instead of taking tens of
    /// times its size in memory; real documents use a small fraction of the budget.
    @inline(__always) mutating func spend(_ bytes: Int) throws(ScanFailure) {
        budget &-= bytes
        if budget < 0 {
            throw .fatal(
                .tooLarge,
                offset: s.pos,
                message:
                    "the document is too dense to decode: its objects would take more memory than the limit of \(CXF.DecodingOptions.memoryFactor)× its size allows"
            )
        }
    }

    /// Reads the value at the cursor as a ``JSONValue``; `invalidUTF8` is set when a string's
    /// bytes had to be replaced.
    mutating func value(invalidUTF8: inout Bool) throws(ScanFailure) -> JSONValue {
        switch s.kind {
        case .object:
            try s.enterObject()
            var members: [JSONMember] = []
            var first = true
            while try s.nextKey(&first) {
                try spend(MemoryLayout<JSONMember>.stride)
                let key = s.keyString
                members.append(JSONMember(key: key, value: try value(invalidUTF8: &invalidUTF8)))
            }
            return .object(members)
        case .array:
            try s.enterArray()
            var elements: [JSONValue] = []
            var first = true
            while try s.nextElement(&first) {
                try spend(MemoryLayout<JSONValue>.stride)
                elements.append(try value(invalidUTF8: &invalidUTF8))
            }
            return .array(elements)
        case .string: return .string(try s.string(try s.scanString(), invalidUTF8: &invalidUTF8))
        case .number: return .number(s.text(try s.scanNumber()))
        case .bool: return .bool(try s.scanBool())
        case .null:
            try s.scanNull()
            return .null
        case .invalid: throw s.syntax("expected a value but found \(s.describeCurrent())")
        }
    }
}
