/// A server of one generated interface.
///
/// The generator writes, for each interface, a protocol refining this one (`Exchange.Server`,
/// as swift-openapi-generator writes `APIProtocol`): one requirement per method, taking the
/// method's `Parameters` and returning its `Reply`, and ``dispatch(method:parameters:request:)``
/// written for it. A type serves an interface by conforming to its protocol, so a method the
/// definition adds and the code leaves out does not compile.
///
/// `Request` is what a transport gives each call beside its parameters (the `Varlink` module's
/// `VarlinkRequest`: the peer, descriptors, more replies); VarlinkCore knows no connections.
package protocol VarlinkInterfaceServer<Request>: Sendable {
    associatedtype Request: Sendable

    /// The interface served.
    static var interface: VarlinkInterface { get }

    /// Runs before the parameters of `method` (its full name, `org.keyport.Exchange.RequestExport`)
    /// are read: a server that must refuse a caller before reading what it sent — an import as
    /// large as a message, from a process it does not serve — refuses here. Every call is
    /// admitted unless a server says otherwise.
    func admit(_ method: String, request: Request) async throws(VarlinkError)

    /// Runs `method` (its name within the interface, checked against the definition already)
    /// with `parameters` (checked against its input already): its reply, or an error of the
    /// interface.
    func dispatch(method: String, parameters: RawJSON, request: Request) async throws(VarlinkError) -> RawJSON
}

extension VarlinkInterfaceServer {
    package func admit(_ method: String, request: Request) async throws(VarlinkError) {}

    /// A call's parameters as `T`. They were checked against the method's definition already, so
    /// a failure here is a mismatch between the definition and `T`: reported, not trapped.
    package static func parameters<T: VarlinkCodable>(
        _ parameters: RawJSON,
        as type: T.Type
    ) throws(VarlinkError) -> T {
        do {
            return try parameters.decode(type)
        } catch {
            throw VarlinkError.invalidParameter(error.path.isEmpty ? "parameters" : error.path, error.message)
        }
    }
}
