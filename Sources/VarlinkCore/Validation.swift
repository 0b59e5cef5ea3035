extension VarlinkInterface {
    /// Checks `parameters` (an object) against `fields`: every field that is not optional present,
    /// every value of its field's type, no member the fields do not name.
    ///
    /// - Returns: `InvalidParameter` naming the parameter (a path such as `items[2].name`) and what is
    ///   wrong with it, or `nil` when the parameters fit.
    package func check(_ parameters: RawJSON, against fields: [VarlinkField]) -> VarlinkError? {
        do {
            if let members = parameters.members {
                try check(members, of: parameters.bytes, against: fields)
            } else {
                var cursor = JSONCursor(parameters.bytes)
                try walk(&cursor, .structure(fields), path: "")
            }
            return nil
        } catch let mismatch as Mismatch {
            return .invalidParameter(mismatch.path.isEmpty ? "parameters" : mismatch.path, mismatch.why)
        } catch {
            return .invalidParameter("parameters", "the parameters are not JSON: \(error)")
        }
    }

    /// The parameters of a call read out of a message: their syntax was checked as it was read, and
    /// where each member lies is known, so each is checked where it is, and a member of type
    /// `object` (a 50 MB CXF document) by its first byte alone rather than read a second time.
    private func check(_ members: [RawJSON.Member], of bytes: [UInt8], against fields: [VarlinkField]) throws {
        var seen = Set<String>()
        for member in members {
            guard let field = fields.first(where: { $0.name == member.name }) else {
                throw Mismatch(path: member.name, why: "\(member.name) is not a parameter here")
            }
            guard seen.insert(member.name).inserted else {
                throw Mismatch(path: member.name, why: "\(member.name) is given twice")
            }
            var cursor = JSONCursor(bytes, in: member.range)
            switch field.type {
            case .object, .optional(.object):
                let kind = try cursor.peekKind()
                if kind == .null, case .optional = field.type { continue }
                guard kind == .object else {
                    throw Mismatch(
                        path: member.name,
                        why: "\(member.name) must be an object, not \(Self.article(kind))"
                    )
                }
            default:
                try walk(&cursor, field.type, path: member.name)
            }
        }
        try requireAll(fields, seen: seen, path: "")
    }

    /// Throws for the first field that is not optional and was not seen.
    private func requireAll(_ fields: [VarlinkField], seen: Set<String>, path: String) throws {
        for field in fields where !seen.contains(field.name) {
            if case .optional = field.type { continue }
            let member = path.isEmpty ? field.name : "\(path).\(field.name)"
            throw Mismatch(path: member, why: "\(member) is missing (\(field.type))")
        }
    }

    /// Reads one value of `type`; throws a ``Mismatch`` or the cursor's ``JSONSyntaxError``.
    private func walk(_ cursor: inout JSONCursor, _ type: VarlinkType, path: String) throws {
        let kind = try cursor.peekKind()
        func wrong(_ expected: String) -> Mismatch {
            let subject = path.isEmpty ? "the parameters" : path
            return Mismatch(path: path, why: "\(subject) must be \(expected), not \(Self.article(kind))")
        }
        switch type {
        case .optional(let inner):
            if kind == .null { try cursor.null() } else { try walk(&cursor, inner, path: path) }
        case .bool:
            guard kind == .bool else { throw wrong("true or false") }
            _ = try cursor.bool()
        case .int:
            guard kind == .number else { throw wrong("an integer") }
            let number = try cursor.number()
            guard number.isInteger, Int64(number.text) != nil else {
                throw Mismatch(path: path, why: "\(path) must be a 64-bit whole number, not \(number.text)")
            }
        case .float:
            guard kind == .number else { throw wrong("a number") }
            _ = try cursor.number()
        case .string:
            guard kind == .string else { throw wrong("a string") }
            _ = try cursor.string()
        case .object:
            guard kind == .object else { throw wrong("an object") }
            try cursor.skipValue()
        case .enumeration(let names):
            guard kind == .string else { throw wrong("one of \(names.joined(separator: ", "))") }
            let value = try cursor.string()
            guard names.contains(value) else {
                throw Mismatch(
                    path: path,
                    why: "\(path) must be one of \(names.joined(separator: ", ")), not '\(value)'"
                )
            }
        case .named(let name):
            guard let defined = types[name] else { throw Mismatch(path: path, why: "the type \(name) is not defined") }
            try walk(&cursor, defined, path: path)
        case .array(let element):
            guard kind == .array else { throw wrong("an array") }
            var index = 0
            try cursor.forEachElement { cursor in
                try walk(&cursor, element, path: "\(path)[\(index)]")
                index += 1
            }
        case .dictionary(let value):
            guard kind == .object else { throw wrong("an object") }
            try cursor.forEachMember { cursor, key in try walk(&cursor, value, path: "\(path)[\(key)]") }
        case .structure(let fields):
            guard kind == .object else { throw wrong("an object") }
            var seen = Set<String>()
            try cursor.forEachMember { cursor, key in
                let member = path.isEmpty ? key : "\(path).\(key)"
                guard let field = fields.first(where: { $0.name == key }) else {
                    throw Mismatch(path: member, why: "\(member) is not a parameter here")
                }
                guard seen.insert(key).inserted else { throw Mismatch(path: member, why: "\(member) is given twice") }
                try walk(&cursor, field.type, path: member)
            }
            try requireAll(fields, seen: seen, path: path)
        }
    }

    private static func article(_ kind: JSONCursor.Kind) -> String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "true or false"
        case .null: "null"
        }
    }
}

/// A parameter that does not fit its type: which one, and why.
private struct Mismatch: Error {
    var path: String
    var why: String
}
