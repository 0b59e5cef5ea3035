// Varlink is VarlinkCore (the protocol, without Foundation or an event loop) with swift-nio's
// connections on top; users of Varlink see both.
@_exported import VarlinkCore
