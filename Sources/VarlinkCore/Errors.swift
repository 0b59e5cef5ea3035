import KeyportEncoding
import KeyportErrors

/// A message that is not a Varlink message at all (not JSON, not an object, no method). There is no
/// Varlink error for this: the peer does not speak the protocol, and the connection is closed.
package struct VarlinkMessageError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<VarlinkMessageError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<VarlinkMessageError> {
    /// Not a call: not a JSON object, or no `method`.
    package static let notACall = Self(rawValue: "not-a-call")
    /// Not a reply: not a JSON object of a reply's members.
    package static let notAReply = Self(rawValue: "not-a-reply")
}

/// An error reply: a fully qualified error name from an interface (`org.keyport.Exchange.UserDeclined`)
/// and its parameters.
///
/// Keyport's interfaces give every error a `message` parameter a person can read; the standard
/// errors of `org.varlink.service` carry what the specification gives them (the method, the
/// parameter, the interface) and Keyport adds `message` beside it, which other clients ignore.
package struct VarlinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The interface's name, a dot, the error's name.
    package var name: String
    /// The error's parameters, an object.
    package var parameters: RawJSON

    package init(name: String, parameters: RawJSON = .emptyObject) {
        self.name = name
        self.parameters = parameters
    }

    /// An error whose parameters are `fields` (strings), each written as a JSON string member.
    package init(name: String, _ fields: KeyValuePairs<String, String>) {
        self.init(name: name, parameters: JSONText.object(fields.map { ($0.key, JSONString.quoted($0.value)) }))
    }

    /// The `message` parameter, when the error has one that is a string.
    package var message: String? {
        guard let value = try? parameters.member("message") else { return nil }
        var cursor = JSONCursor(value.bytes)
        return try? cursor.string()
    }

    package var description: String {
        if let message { return "\(name): \(message)" }
        return parameters == .emptyObject ? name : "\(name) \(parameters)"
    }

    /// What a person reads of this error — the one place a Varlink error becomes a sentence:
    /// its `message` (after the parameter it is about, for `InvalidParameter`); for the standard
    /// errors of a service that gives no message (another implementation), what the
    /// specification's parameters say; else its name, and parameters if it has any.
    package var sentence: String {
        func string(_ member: String) -> String? {
            guard let value = try? parameters.member(member) else { return nil }
            var cursor = JSONCursor(value.bytes)
            return try? cursor.string()
        }
        let parameter = string("parameter")
        if let message {
            guard name == VarlinkService.InvalidParameter.name, let parameter, !message.hasPrefix(parameter) else {
                return message
            }
            return "\(parameter): \(message)"
        }
        switch name {
        case VarlinkService.InterfaceNotFound.name:
            return "the service has no interface \(string("interface") ?? "of that name")"
        case VarlinkService.MethodNotFound.name:
            return "the service has no method \(string("method") ?? "of that name")"
        case VarlinkService.MethodNotImplemented.name:
            return "the service does not implement \(string("method") ?? "that method")"
        case VarlinkService.InvalidParameter.name:
            return "the parameter \(parameter ?? "given") is not one the method takes"
        case VarlinkService.PermissionDenied.name:
            return "the service refused the call (permission denied)"
        case VarlinkService.ExpectedMore.name:
            return "the method must be called with \"more\""
        default:
            return description
        }
    }

    // MARK: org.varlink.service

    /// The service does not provide `interface`.
    package static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(
            name: VarlinkService.InterfaceNotFound.name,
            ["interface": interface, "message": "this service has no interface \(interface)"]
        )
    }

    /// The interface has no method `method` (fully qualified).
    package static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(
            name: VarlinkService.MethodNotFound.name,
            ["method": method, "message": "there is no method \(method)"]
        )
    }

    /// The interface declares `method`, but this service does not implement it.
    package static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(
            name: VarlinkService.MethodNotImplemented.name,
            ["method": method, "message": "\(method) is declared but not implemented"]
        )
    }

    /// A parameter is missing, of the wrong type, or not one the method takes; `why` says which.
    package static func invalidParameter(_ parameter: String, _ why: String) -> VarlinkError {
        VarlinkError(name: VarlinkService.InvalidParameter.name, ["parameter": parameter, "message": why])
    }

    /// The caller may not make this call; `why` says what would allow it.
    package static func permissionDenied(_ why: String) -> VarlinkError {
        VarlinkError(name: VarlinkService.PermissionDenied.name, ["message": why])
    }

    /// The method streams its replies and must be called with `more`.
    package static func expectedMore(_ method: String) -> VarlinkError {
        VarlinkError(
            name: VarlinkService.ExpectedMore.name,
            ["message": "\(method) must be called with \"more\": true"]
        )
    }
}
