extension VarlinkInterface {
    /// `org.varlink.service`, which every Varlink service answers: what the service is and which
    /// interfaces it has, each interface's definition, and the standard errors.
    package static let service: VarlinkInterface = {
        do {
            return try VarlinkInterface(serviceDefinition)
        } catch {
            preconditionFailure("org.varlink.service does not parse: \(error)")
        }
    }()

    // The members and their types are the protocol's (varlink.org); the comments are Keyport's.
    private static let serviceDefinition = """
        # Every Varlink service provides this interface: it says what the service is, which
        # interfaces it implements, and gives each interface's definition.
        interface org.varlink.service

        # Who made the service, what it is, its version and where to read about it, and the names of
        # the interfaces it implements.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # The definition of one of the service's interfaces, in the interface definition language.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The service does not implement this interface.
        error InterfaceNotFound (interface: string)

        # The interface has no such method.
        error MethodNotFound (method: string)

        # The interface declares the method, but the service does not implement it.
        error MethodNotImplemented (method: string)

        # A parameter is missing, unknown, or not of its declared type.
        error InvalidParameter (parameter: string)

        # The caller may not call this method.
        error PermissionDenied ()

        # The method replies more than once and must be called with "more": true.
        error ExpectedMore ()

        """
}
