/// Parameter types of `org.keyport.Callbacks` (Interfaces/org.keyport.Callbacks.varlink) and of
/// `org.keyport.CallbackSession`, the interface each waiting session serves on its own socket
/// (defined in the WebAuthentication module, which serves it).
package enum Callbacks {
    package static let listen = "org.keyport.Callbacks.Listen"
    package static let deliver = "org.keyport.Callbacks.Deliver"
    package static let offer = "org.keyport.CallbackSession.Offer"

    package struct ListenIn: Codable, Hashable, Sendable {
        package var scheme: String
        package var socket: String

        package init(scheme: String, socket: String) {
            self.scheme = scheme
            self.socket = socket
        }
    }

    /// `Deliver`'s and `Offer`'s input.
    package struct URLIn: Codable, Hashable, Sendable {
        package var url: String

        package init(url: String) { self.url = url }
    }

    package struct OfferOut: Codable, Hashable, Sendable {
        package var accepted: Bool

        package init(accepted: Bool) { self.accepted = accepted }
    }

    package enum Error {
        package static let noSession = "org.keyport.Callbacks.NoSession"
        package static let invalidCallback = "org.keyport.Callbacks.InvalidCallback"
    }
}
