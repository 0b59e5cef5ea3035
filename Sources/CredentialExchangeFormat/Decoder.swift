import KeyportEncoding

import struct Foundation.Data

extension CXF {
    /// Limits that keep hostile input from costing unbounded time, memory or stack.
    public struct DecodingOptions: Hashable, Sendable {
        /// The deepest nesting any decoder accepts, whatever ``maxDepth`` asks for. The reader and
        /// the encoder recurse once per level; at this depth they fit in a 2 MiB thread stack even
        /// in a debug build (about 2.6 KiB a level there, far less optimised).
        public static let maxDepthLimit = 512
        /// The decoded model may take at most this many times the document's size (plus 1 MiB),
        /// counted as the inline size of every object, element and kept value: a guard against
        /// documents built to cost memory. Real exports count about 1–3× (docs/performance.md).
        public static let memoryFactor = 8

        /// The largest document accepted, in bytes (default 256 MiB).
        public var maxDocumentSize: Int
        /// The deepest nesting of JSON objects and arrays accepted (default 64), at most
        /// ``maxDepthLimit``. A CXF 1.0 document with five levels of sub-collections nests about 16 deep.
        public var maxDepth: Int
        /// How many diagnostics of one code are listed (default 100); the rest are counted in one
        /// summary diagnostic per code, so a hostile document cannot fill memory with findings.
        public var maxDiagnosticsPerCode: Int

        /// Limits; the defaults (256 MiB, nesting 64 deep, 100 findings per code) are far above what real
        /// exports need.
        public init(maxDocumentSize: Int = 256 << 20, maxDepth: Int = 64, maxDiagnosticsPerCode: Int = 100) {
            self.maxDocumentSize = maxDocumentSize
            self.maxDepth = maxDepth
            self.maxDiagnosticsPerCode = maxDiagnosticsPerCode
        }
    }

    /// A decoded document with what the decoder had to tolerate to read it.
    public struct DecodedDocument: Hashable, Sendable {
        /// The document: everything that could be read typed, the rest kept verbatim.
        public var document: Document
        /// What the decoder had to tolerate, each with a JSON pointer into the source. An error means a value
        /// was kept as it came instead of being read; see ``Diagnostic``.
        public var diagnostics: [Diagnostic]
    }

    /// The tolerant CXF decoder.
    ///
    /// It reads both top-level shapes (a ``Header`` document and an ``Account`` alone) and decodes
    /// element by element: an unknown credential type, field type, enum value or member never fails
    /// the document. Unknown members are kept in `unknownMembers`; a credential that cannot be typed
    /// is kept as ``UnrecognizedCredential``; a member of the wrong JSON type is treated as absent and
    /// kept verbatim. Each of these leaves a ``Diagnostic`` with a JSON pointer. Only input that is not
    /// JSON, exceeds ``DecodingOptions``, or is not a CXF object at all throws ``CXFDecodingError``.
    public struct Decoder: Sendable {
        /// The limits this decoder applies.
        public var options: DecodingOptions

        /// A decoder with these limits.
        public init(options: DecodingOptions = DecodingOptions()) {
            self.options = options
        }

        /// Decodes the UTF-8 JSON document in `data`.
        ///
        /// - Throws: ``CXFDecodingError`` when the input is not JSON, exceeds ``options``, or is not a CXF
        ///   header or account.
        public func decode(_ data: Data) throws(CXFDecodingError) -> DecodedDocument {
            var result: Result<DecodedDocument, CXFDecodingError>!
            data.withUnsafeBytes { buffer in result = Result { () throws(CXFDecodingError) in try decode(buffer) } }
            return try result.get()
        }

        /// Decodes the UTF-8 JSON document in `bytes`.
        ///
        /// - Throws: ``CXFDecodingError`` when the input is not JSON, exceeds ``options``, or is not a CXF
        ///   header or account.
        public func decode(_ bytes: [UInt8]) throws(CXFDecodingError) -> DecodedDocument {
            var result: Result<DecodedDocument, CXFDecodingError>!
            bytes.withUnsafeBytes { buffer in result = Result { () throws(CXFDecodingError) in try decode(buffer) } }
            return try result.get()
        }

        /// Decodes the JSON document in `text`.
        ///
        /// - Throws: ``CXFDecodingError`` when the input is not JSON, exceeds ``options``, or is not a CXF
        ///   header or account.
        public func decode(_ text: String) throws(CXFDecodingError) -> DecodedDocument {
            try decode(Array(text.utf8))
        }

        /// Decodes the UTF-8 JSON document in `buffer`, which need only stay valid for the call.
        ///
        /// - Throws: ``CXFDecodingError`` when the input is not JSON, exceeds ``options``, or is not a CXF
        ///   header or account.
        public func decode(_ buffer: UnsafeRawBufferPointer) throws(CXFDecodingError) -> DecodedDocument {
            try read(buffer) { decoder throws(ScanFailure) in
                let document = try decoder.document()
                return DecodedDocument(document: document, diagnostics: decoder.diagnostics.finish())
            }
        }

        /// One JSON value of any kind, read with the decoder's limits (size, depth, memory), for
        /// the formats around CXF that Keyport reads strictly (the encrypted export's envelope):
        /// numbers keep their source text, objects their members in order, repeats included.
        ///
        /// - Throws: ``CXFDecodingError`` (`syntax`, `too-large`, `too-deep`) for text that is not
        ///   one JSON value within the limits, or is not UTF-8.
        package func decodeJSON(_ bytes: [UInt8]) throws(CXFDecodingError) -> JSONValue {
            var result: Result<JSONValue, CXFDecodingError>!
            bytes.withUnsafeBytes { buffer in
                result = Result { () throws(CXFDecodingError) in
                    try read(buffer) { decoder throws(ScanFailure) in
                        decoder.s.skipWhitespace()
                        let start = decoder.s.pos
                        var invalidUTF8 = false
                        let value = try decoder.value(invalidUTF8: &invalidUTF8)
                        guard !invalidUTF8 else { throw decoder.s.syntax("the text is not UTF-8", at: start) }
                        decoder.s.skipWhitespace()
                        guard decoder.s.pos == decoder.s.count else {
                            throw decoder.s.syntax("unexpected \(decoder.s.describeCurrent()) after the value")
                        }
                        return value
                    }
                }
            }
            return try result.get()
        }

        /// What a document's top level says about its version, read in one pass that stops at
        /// `accounts` once the version is known (exporters write it first): what a relay checks
        /// before it passes a document on, without the cost of decoding it (its receiver does).
        /// The JSON after that point is not looked at.
        ///
        /// - Throws: ``CXFDecodingError`` when the top level is not an object, `version` is not an
        ///   object, `accounts` is not an array, or the JSON read is not JSON.
        package func peekHeader(_ buffer: UnsafeRawBufferPointer) throws(CXFDecodingError) -> PeekedHeader {
            try read(buffer) { decoder throws(ScanFailure) in
                var s = decoder.s
                var header = PeekedHeader()
                s.skipWhitespace()
                guard s.kind == .object else { throw s.syntax("the document is not a JSON object") }
                try s.enterObject()
                var first = true
                while try s.nextKey(&first) {
                    if s.keyIs("version") {
                        guard s.kind == .object else { throw s.syntax("\"version\" is not an object") }
                        try s.enterObject()
                        var firstInVersion = true
                        while try s.nextKey(&firstInVersion) {
                            if s.keyIs("major"), s.kind == .number {
                                let number = try s.scanNumber()
                                header.major = number.isInteger ? s.int64(number).flatMap { Int(exactly: $0) } : nil
                            } else {
                                try s.skipValue()
                            }
                        }
                    } else if s.keyIs("accounts") {
                        guard s.kind == .array else { throw s.syntax("\"accounts\" is not an array") }
                        header.hasAccounts = true
                        if header.major != nil { return header }
                        try s.skipValue()
                    } else {
                        try s.skipValue()
                    }
                }
                return header
            }
        }

        /// Runs `body` over a decoder of `buffer` within ``options``; a failure becomes a
        /// ``CXFDecodingError`` with its line and column.
        func read<T>(
            _ buffer: UnsafeRawBufferPointer,
            _ body: (inout DocumentDecoder) throws(ScanFailure) -> T
        ) throws(CXFDecodingError) -> T {
            guard buffer.count <= options.maxDocumentSize else {
                throw CXFDecodingError(
                    code: .tooLarge,
                    offset: 0,
                    line: 1,
                    column: 1,
                    message: "the document is \(buffer.count) bytes, more than the limit of \(options.maxDocumentSize)"
                )
            }
            guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count > 0 else {
                throw CXFDecodingError(code: .syntax, offset: 0, line: 1, column: 1, message: "the document is empty")
            }
            let depth = min(max(options.maxDepth, 1), DecodingOptions.maxDepthLimit)
            var decoder = DocumentDecoder(
                scanner: JSONScanner(base: base, count: buffer.count, maxDepth: depth),
                budget: buffer.count.multipliedReportingOverflow(by: DecodingOptions.memoryFactor).partialValue
                    + (1 << 20),
                diagnosticLimit: options.maxDiagnosticsPerCode
            )
            do {
                return try body(&decoder)
            } catch {
                switch error {
                case .fatal(let name, let offset, let message):
                    let code = CXFDecodingError.Code(rawValue: name)
                    var line = 1
                    var lineStart = 0
                    for i in 0..<min(offset, buffer.count) where base[i] == 0x0A {
                        line += 1
                        lineStart = i + 1
                    }
                    throw CXFDecodingError(
                        code: code,
                        offset: offset,
                        line: line,
                        column: offset - lineStart + 1,
                        message: message
                    )
                case .malformed(let reason), .unsupported(let reason):
                    // Only credentials are dropped to verbatim form; nothing else throws these.
                    throw CXFDecodingError(code: .syntax, offset: 0, line: 1, column: 1, message: reason)
                }
            }
        }
    }
}

/// What ``CXF/Decoder/peekHeader(_:)`` found at a document's top level.
package struct PeekedHeader: Sendable, Equatable {
    /// `version.major`, when it is an integer.
    package var major: Int?
    /// Whether it has an `accounts` array.
    package var hasAccounts = false
}

/// One step of a JSON pointer, kept cheap while decoding and rendered only for a diagnostic.
enum PathComponent {
    case key(StaticString)
    case index(Int)

    func render(into out: inout String) {
        out += "/"
        switch self {
        case .key(let key): out += JSONPointer.escape(key.description)
        case .index(let index): out += String(index)
        }
    }
}

/// The state of one decode: the scanner, the diagnostics so far, where we are, and the unknown
/// members waiting for the object being read to finish.
///
/// Nothing the document holds is lost: a member that cannot be read as its type is kept verbatim
/// among the object's unknown members (outside credentials), or makes the whole credential kept
/// verbatim (inside one); see "Nothing lost" in docs/architecture.md.
package struct DocumentDecoder {
    var s: JSONScanner
    /// Bytes of model the decode may still build (see ``spend(_:)``).
    var budget: Int
    var diagnostics: DiagnosticList
    var path: [PathComponent] = []
    /// Unknown members of the objects being decoded, innermost last. Each object remembers the count
    /// when it starts and takes what was added since when it ends.
    var pendingUnknown: [JSONMember] = []
    /// Inside a credential every member must read as its type; otherwise the credential is kept
    /// whole, verbatim, rather than partly typed and partly kept.
    var inCredential = false

    init(scanner: JSONScanner, budget: Int, diagnosticLimit: Int) {
        self.s = scanner
        self.budget = budget
        diagnostics = DiagnosticList(limit: diagnosticLimit)
        path.reserveCapacity(32)
    }

    // MARK: Diagnostics

    func pointer(member: String? = nil) -> String {
        var out = ""
        for component in path { component.render(into: &out) }
        if let member { out += "/" + JSONPointer.escape(member) }
        return out
    }

    /// Records a finding; its pointer is rendered only when the finding is listed.
    mutating func report(
        _ severity: Diagnostic.Severity,
        _ code: Diagnostic.Code,
        _ message: String,
        member: String? = nil
    ) {
        let path = diagnostics.wants(code) ? pointer(member: member) : ""
        diagnostics.append(severity, code, path: path, message: message)
    }

    /// The current member has a JSON type its member cannot be read from. Inside a credential the
    /// credential is then kept whole; elsewhere the member is kept verbatim among the unknown
    /// members (the encoder writes it back in place of the typed member's stand-in) with an error:
    /// an importer reading the document would miss that value.
    mutating func keepWrongType(expected: String) throws(ScanFailure) {
        let key = s.keyString
        if inCredential { throw .malformed("has '\(key)' as \(s.kindDescription) where \(expected) belongs") }
        let value = try jsonValue(member: key)
        report(
            .error,
            .wrongType,
            "'\(key)' should be \(expected) but is \(value.kindDescription); it cannot be read, and it is kept as it came",
            member: key
        )
        pendingUnknown.append(JSONMember(key: key, value: value, unreadable: true))
    }

    /// Keeps the current member verbatim among the unknown members.
    @inline(__always) mutating func keepUnknown() throws(ScanFailure) {
        let key = s.keyString
        pendingUnknown.append(JSONMember(key: key, value: try jsonValue(member: key)))
    }

    mutating func jsonValue(member: String?) throws(ScanFailure) -> JSONValue {
        var invalid = false
        let value = try value(invalidUTF8: &invalid)
        if invalid { reportInvalidUTF8(member: member) }
        return value
    }

    @inline(__always) mutating func takeUnknown(since mark: Int) -> [JSONMember] {
        if pendingUnknown.count == mark { return [] }
        let members = Array(pendingUnknown[mark...])
        pendingUnknown.removeSubrange(mark...)
        return members
    }

    /// Marks member `bit` as read; false for a repeat, which has then been consumed.
    ///
    /// JSON parsers disagree about repeated keys (first wins, last wins, error), so a repeat makes
    /// the document ambiguous: an error. The first occurrence is read; the repeat is kept verbatim
    /// and written back, so nothing is lost. Inside a credential the credential is kept whole.
    @inline(__always) mutating func claim(_ bit: Int, _ seen: inout UInt64) throws(ScanFailure) -> Bool {
        if seen & (1 << bit) == 0 {
            seen |= 1 << bit
            return true
        }
        try keepRepeat()
        return false
    }

    mutating func keepRepeat() throws(ScanFailure) {
        let key = s.keyString
        if inCredential { throw .malformed("has '\(key)' more than once") }
        let value = try jsonValue(member: key)
        report(
            .error,
            .duplicateMember,
            "'\(key)' appears more than once; the first is read, and this one is kept as it came",
            member: key
        )
        pendingUnknown.append(JSONMember(key: key, value: value))
    }

    mutating func reportInvalidUTF8(member: String?) {
        report(
            .warning,
            .invalidUTF8,
            "text is not valid UTF-8; the bad bytes were replaced with U+FFFD",
            member: member
        )
    }

    // MARK: Scalars

    /// A string member; `nil` when null or of another type (then kept verbatim).
    mutating func stringValue() throws(ScanFailure) -> String? {
        switch s.kind {
        case .string:
            var invalid = false
            let value = try s.string(try s.scanString(), invalidUTF8: &invalid)
            if invalid { reportInvalidUTF8(member: s.keyString) }
            return value
        case .null:
            try s.scanNull()
            return nil
        case .number:
            // The number is not quoted back: the member may hold a secret (a generated password).
            let text = s.text(try s.scanNumber())
            report(
                .warning,
                .coercedValue,
                "'\(s.keyString)' should be text but is a number; read as its digits",
                member: s.keyString
            )
            return text
        default:
            try keepWrongType(expected: "a string")
            return nil
        }
    }

    /// Bytes written as base64url. An `id` that is not base64url is read as its UTF-8 text, so that
    /// links to it still resolve; other bytes that are not base64url cannot be read (see
    /// ``keepWrongType(expected:)``).
    mutating func bytesValue(isID: Bool) throws(ScanFailure) -> Data? {
        switch s.kind {
        case .string:
            let span = try s.scanString()
            let decoded: Data?
            if span.escaped {
                decoded = try s.unescape(span).withUnsafeBytes { try? Base64URL.decodeData($0) }
            } else {
                decoded = try? Base64URL.decodeData(
                    UnsafeRawBufferPointer(start: s.base + span.start, count: span.end - span.start)
                )
            }
            if let decoded { return decoded }
            let key = s.keyString
            if isID {
                var invalid = false
                let text = try s.string(span, invalidUTF8: &invalid)
                report(
                    .warning,
                    .idNotBase64URL,
                    "'\(key)' is not base64url; its text is used as the identifier",
                    member: key
                )
                return Data(text.utf8)
            }
            if inCredential { throw .malformed("has '\(key)' that is not base64url") }
            s.pos = span.start - 1
            let value = try jsonValue(member: key)
            report(
                .error,
                .invalidBase64URL,
                "'\(key)' is not base64url; it cannot be read, and it is kept as it came",
                member: key
            )
            pendingUnknown.append(JSONMember(key: key, value: value, unreadable: true))
            return nil
        case .null:
            try s.scanNull()
            return nil
        default:
            try keepWrongType(expected: "a base64url string")
            return nil
        }
    }

    /// An integer member within `range`. Integral floats and numeric strings are read with a
    /// warning; anything else, or a number outside `range`, cannot be read.
    mutating func integerValue(in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(ScanFailure) -> Int64? {
        let start = s.pos
        let key = s.keyString
        var read: Int64?
        switch s.kind {
        case .number:
            let n = try s.scanNumber()
            if n.isInteger, let v = s.int64(n) {
                read = v
            } else if let d = Double(s.text(n)), d == d.rounded() {
                guard let v = Int64(exactly: d) else {
                    s.pos = start
                    return try keepOutOfRange(key, range)
                }
                report(
                    .warning,
                    .coercedValue,
                    "'\(key)' should be an integer but is \(s.text(n)); read as \(v)",
                    member: key
                )
                read = v
            } else if n.isInteger {
                s.pos = start
                return try keepOutOfRange(key, range)
            }
        case .string:
            let span = try s.scanString()
            var invalid = false
            if let text = try? s.string(span, invalidUTF8: &invalid), let v = Int64(text) {
                report(
                    .warning,
                    .coercedValue,
                    "'\(key)' should be an integer but is the text \"\(v)\"; read as \(v)",
                    member: key
                )
                read = v
            }
        case .null:
            try s.scanNull()
            return nil
        default:
            break
        }
        guard let read else {
            s.pos = start
            try keepWrongType(expected: "an integer")
            return nil
        }
        guard range.contains(read) else {
            s.pos = start
            return try keepOutOfRange(key, range)
        }
        return read
    }

    /// Keeps the number at the cursor, which is outside `range`, as ``keepWrongType(expected:)`` does.
    private mutating func keepOutOfRange(_ key: String, _ range: ClosedRange<Int64>) throws(ScanFailure) -> Int64? {
        if inCredential { throw .malformed("has '\(key)' outside \(range.lowerBound)…\(range.upperBound)") }
        let value = try jsonValue(member: key)
        let shown = if case .number(let text) = value { text } else { value.kindDescription }
        report(
            .error,
            .wrongType,
            "'\(key)' is \(shown), outside \(range.lowerBound)…\(range.upperBound); it cannot be read, and it is kept as it came",
            member: key
        )
        pendingUnknown.append(JSONMember(key: key, value: value, unreadable: true))
        return nil
    }

    mutating func int64Value() throws(ScanFailure) -> Int64? { try integerValue() }

    /// A non-negative integer member that fits `T`.
    mutating func unsignedValue<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) throws(ScanFailure) -> T? {
        let upper = T.bitWidth >= 64 ? Int64.max : Int64(T.max)
        return try integerValue(in: 0...upper).map { T($0) }
    }

    mutating func boolValue() throws(ScanFailure) -> Bool? {
        switch s.kind {
        case .bool: return try s.scanBool()
        case .null:
            try s.scanNull()
            return nil
        case .string:
            let start = s.pos
            let span = try s.scanString()
            let n = span.end - span.start
            let p = s.base + span.start
            if n == 4 && memcmpEqual(p, "true") || n == 5 && memcmpEqual(p, "false") {
                let v = n == 4
                report(
                    .warning,
                    .coercedValue,
                    "'\(s.keyString)' should be a boolean but is the text \"\(v)\"; read as \(v)",
                    member: s.keyString
                )
                return v
            }
            s.pos = start
            try keepWrongType(expected: "a boolean")
            return nil
        default:
            try keepWrongType(expected: "a boolean")
            return nil
        }
    }

    /// An array of strings. Anything else keeps the whole member verbatim.
    mutating func stringArray() throws(ScanFailure) -> [String]? {
        switch s.kind {
        case .array:
            let start = s.pos
            let depth = s.depth
            let key = s.keyString
            try s.enterArray()
            var out: [String] = []
            var first = true
            var invalid = false
            while try s.nextElement(&first) {
                s.skipWhitespace()
                guard s.kind == .string else {
                    let found = "element \(out.count) is \(s.kindDescription)"
                    s.pos = start
                    s.depth = depth
                    try keepWrongTypeElement(key, expected: "an array of strings", found: found)
                    return nil
                }
                try spend(MemoryLayout<String>.stride)
                out.append(try s.string(try s.scanString(), invalidUTF8: &invalid))
            }
            if invalid { reportInvalidUTF8(member: key) }
            return out
        case .null:
            try s.scanNull()
            return nil
        default:
            try keepWrongType(expected: "an array of strings")
            return nil
        }
    }

    /// Like ``keepWrongType(expected:)`` for an array member whose key the scanner has since moved
    /// past (it read elements); the cursor is back on the array.
    mutating func keepWrongTypeElement(_ key: String, expected: String, found: String) throws(ScanFailure) {
        if inCredential { throw .malformed("has '\(key)' that is not \(expected): \(found)") }
        let value = try jsonValue(member: key)
        report(
            .error,
            .wrongType,
            "'\(key)' should be \(expected) but \(found); it cannot be read, and it is kept as it came",
            member: key
        )
        pendingUnknown.append(JSONMember(key: key, value: value, unreadable: true))
    }

    // MARK: Containers

    /// An array of objects, each read by `element`. An element that is not an object is given to
    /// `keep`, which can hold it verbatim; without one (the typed model has no place for it) the
    /// whole member cannot be read and is kept verbatim (see ``keepWrongType(expected:)``). `nil`
    /// when the member is null or cannot be read.
    mutating func objectArray<T>(
        _ key: StaticString,
        _ element: (inout DocumentDecoder) throws(ScanFailure) -> T?,
        keep: ((inout DocumentDecoder, JSONValue) -> T)? = nil
    ) throws(ScanFailure) -> [T]? {
        switch s.kind {
        case .array:
            let start = s.pos
            let depth = s.depth
            let diagnosticsMark = diagnostics.mark
            let unknownMark = pendingUnknown.count
            try s.enterArray()
            path.append(.key(key))
            var out: [T] = []
            var first = true
            var index = 0
            while try s.nextElement(&first) {
                s.skipWhitespace()
                try spend(MemoryLayout<T>.stride)
                path.append(.index(index))
                if s.kind == .object {
                    if let value = try element(&self) { out.append(value) }
                } else if let keep {
                    out.append(keep(&self, try jsonValue(member: nil)))
                } else {
                    // Forget what the elements so far reported and keep the member whole.
                    let what = s.kindDescription
                    path.removeLast(2)
                    s.pos = start
                    s.depth = depth
                    diagnostics.rewind(to: diagnosticsMark)
                    pendingUnknown.removeSubrange(unknownMark...)
                    try keepWrongTypeElement(
                        key.description,
                        expected: "an array of objects",
                        found: "element \(index) is \(what)"
                    )
                    return nil
                }
                path.removeLast()
                index += 1
            }
            path.removeLast()
            return out
        case .null:
            try s.scanNull()
            return nil
        default:
            try keepWrongType(expected: "an array")
            return nil
        }
    }

    /// A nested object read by `body`; `nil` when null or not an object (then kept verbatim).
    mutating func object<T>(
        _ key: StaticString,
        _ body: (inout DocumentDecoder) throws(ScanFailure) -> T
    ) throws(ScanFailure) -> T? {
        switch s.kind {
        case .object:
            path.append(.key(key))
            defer { path.removeLast() }
            return try body(&self)
        case .null:
            try s.scanNull()
            return nil
        default:
            try keepWrongType(expected: "an object")
            return nil
        }
    }

    /// Finds the string member `name` of the object at the cursor without consuming anything.
    mutating func peekString(_ name: StaticString) throws(ScanFailure) -> String? {
        let start = s.pos
        let depth = s.depth
        defer {
            s.pos = start
            s.depth = depth
        }
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs(name) {
                guard s.kind == .string else { return nil }
                var invalid = false
                return try s.string(try s.scanString(), invalidUTF8: &invalid)
            }
            try s.skipValue()
        }
        return nil
    }
}

@inline(__always) func memcmpEqual(_ p: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
    memcmp(p, literal.utf8Start, literal.utf8CodeUnitCount) == 0
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Base64URL {
    /// Decodes base64url or base64 bytes, padded or not, straight into `Data` (CXF's binary values).
    static func decodeData(_ input: UnsafeRawBufferPointer) throws(DecodingError) -> Data {
        var out = Data(count: try decodedCount(input))
        let failure = out.withUnsafeMutableBytes { buffer -> DecodingError? in
            do throws(DecodingError) {
                try decode(input, into: buffer)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        return out
    }
}
