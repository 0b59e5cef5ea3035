import KeyportInterfacesCore
import KeyportSystemCore
import Synchronization
import VarlinkCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyport-browser`: relays the browser extension's AutoFill calls to keyportd
/// (Interfaces/AutoFill/org.keyport.Browser.varlink says how the messages look).
///
/// An AutoFill client like `keyport password`: it asks keyportd, which applies its matching rule
/// and asks the providers; the host decides nothing about what fits. Each call runs on a thread
/// of its own with its own connection to keyportd, so a call waiting for the person (a locked
/// vault) holds up no other tab's; replies are written whole, one frame at a time. Standard
/// output carries frames only; what goes wrong with the host itself goes to standard error,
/// which the browser keeps in its log.
package final class BrowserHost: Sendable {
    /// The calls relayed; anything else is refused (MethodNotRelayed).
    package static let relayed: Set<String> = [
        AutoFill.ListIdentities.name, AutoFill.RequestCredential.name, AutoFill.RequestFromList.name,
        AutoFill.SavePassword.name, WebAuthn.ListAuthenticators.name, WebAuthn.ListPasskeys.name,
        WebAuthn.Create.name, WebAuthn.Get.name,
    ]

    /// The calls answered at once: the others may wait for the person, and say so as they do.
    static let immediate: Set<String> = [
        AutoFill.ListIdentities.name, WebAuthn.ListAuthenticators.name, WebAuthn.ListPasskeys.name,
    ]

    /// A call being relayed: its socket to keyportd once connected, and whether Cancel stopped it.
    private struct Running {
        var socket: Int32 = -1
        var canceled = false
    }

    private let environment: [String: String]
    private let input: Int32
    private let output: Int32
    /// Held while a frame is written, so frames from several calls never interleave.
    private let writing = Mutex(())
    /// The calls running, by id. A call's socket is closed only after it left this table, so
    /// Cancel never shuts a descriptor that has been reused.
    private let running = Mutex<[Int: Running]>([:])

    package init(environment: [String: String], input: Int32 = 0, output: Int32 = 1) {
        self.environment = environment
        self.input = input
        self.output = output
    }

    /// Serves until the browser closes the port; calls still running end with the process.
    package func run() {
        while true {
            switch NativeMessaging.readMessage(from: input) {
            case .closed:
                return
            case .tooLarge(let length):
                send(
                    nil,
                    VarlinkError(
                        Browser.InvalidMessage(
                            message:
                                "a message of \(length) bytes is larger than the \(NativeMessaging.maximumIncoming) this host reads"
                        )
                    )
                )
            case .message(let message):
                dispatch(message)
            }
        }
    }

    private func dispatch(_ message: [UInt8]) {
        let call: VarlinkCall
        let id: Int
        do {
            call = try VarlinkCall(message: message)
            id = try Browser.Message(json: RawJSON(bytes: message)).id
        } catch {
            send(nil, VarlinkError(Browser.InvalidMessage(message: "\(error)")))
            return
        }
        if call.method == Browser.Cancel.name {
            cancel(call, id: id)
            return
        }
        guard Self.relayed.contains(call.method) else {
            send(id, VarlinkError(Browser.MethodNotRelayed(method: call.method)))
            return
        }
        if let refusal = Self.refusal(of: call) {
            send(id, refusal)
            return
        }
        let started = running.withLock { running in
            guard running[id] == nil else { return false }
            running[id] = Running()
            return true
        }
        guard started else {
            send(id, VarlinkError(Browser.InvalidMessage(message: "a call with id \(id) is running already")))
            return
        }
        Threads.detach { [self] in relay(call, id: id) }
    }

    /// Why a call is not relayed: a page is one web site, so every call names http or https
    /// services, at least one (keyportd would list every identity for none: a picker's list,
    /// which no page needs), or, for WebAuthn, its origin.
    static func refusal(of call: VarlinkCall) -> VarlinkError? {
        if call.method.hasPrefix(WebAuthn.name + ".") {
            guard let origin = try? call.parameters.member("origin")?.decode(String.self),
                origin.hasPrefix("https://") || origin.hasPrefix("http://")
            else {
                return .invalidParameter("origin", "a call from the browser names the page's http or https origin")
            }
            return nil
        }
        let member = call.method == AutoFill.SavePassword.name ? "serviceIdentifier" : "serviceIdentifiers"
        let services: [AutoFill.ServiceIdentifier]
        do {
            guard let value = try call.parameters.member(member) else {
                return .invalidParameter(member, "a call from the browser names the page's site")
            }
            services =
                member == "serviceIdentifier"
                ? [try value.decode(AutoFill.ServiceIdentifier.self)]
                : try value.decode([AutoFill.ServiceIdentifier].self)
        } catch {
            return .invalidParameter(member, "\(error)")
        }
        guard !services.isEmpty else {
            return .invalidParameter(member, "a call from the browser names the page's site")
        }
        for service in services
        where !(service.identifier.hasPrefix("https://") || service.identifier.hasPrefix("http://")) {
            return .invalidParameter(member, "a call from the browser names http or https sites only")
        }
        return nil
    }

    private func cancel(_ call: VarlinkCall, id: Int) {
        let target: Int
        do {
            target = try call.parameters.decode(Browser.Cancel.Parameters.self).call
        } catch {
            send(id, VarlinkError.invalidParameter("call", "\(error)"))
            return
        }
        running.withLock { running in
            guard var stopped = running[target] else { return }
            stopped.canceled = true
            if stopped.socket >= 0 { shutdown(stopped.socket, Int32(SHUT_RDWR)) }
            running[target] = stopped
        }
        send(id, VarlinkReply())
    }

    /// Relays `call` to keyportd on a connection of its own, its interim replies as they come.
    private func relay(_ call: VarlinkCall, id: Int) {
        let connection: VarlinkBlockingConnection
        do {
            connection = try DaemonClient.connect(environment: environment)
        } catch {
            _ = running.withLock { $0.removeValue(forKey: id) }
            let why = (error as? DaemonError)?.description ?? "keyportd: \(error)"
            send(id, VarlinkError(Browser.DaemonUnavailable(message: why)))
            return
        }
        let reply = withExtendedLifetime(connection) { () -> VarlinkReply in
            // Out of the table before the connection closes, so Cancel never shuts a reused
            // descriptor; and before the last reply, so the id is free once it came.
            defer { _ = running.withLock { $0.removeValue(forKey: id) } }
            let canceled = running.withLock { running in
                running[id]?.socket = connection.socket
                return running[id]?.canceled ?? true
            }
            guard !canceled else { return VarlinkReply(error: Self.canceled) }
            do {
                let last =
                    Self.immediate.contains(call.method)
                    ? try connection.call(call.method, call.parameters)
                    : try connection.call(call.method, call.parameters) { interim in
                        send(id, VarlinkReply(parameters: interim, continues: true))
                    }
                return VarlinkReply(parameters: last)
            } catch let error as VarlinkError {
                return VarlinkReply(error: error)
            } catch {
                if running.withLock({ $0[id]?.canceled ?? false }) { return VarlinkReply(error: Self.canceled) }
                return VarlinkReply(error: VarlinkError(Browser.DaemonUnavailable(message: "keyportd: \(error)")))
            }
        }
        send(id, reply)
    }

    private static let canceled = VarlinkError(Browser.Canceled(message: "the extension stopped the call"))

    private func send(_ id: Int?, _ error: VarlinkError) {
        send(id, VarlinkReply(error: error))
    }

    /// Writes `reply` as one frame, with the call's `id` first (none when the message that
    /// failed had none to read).
    private func send(_ id: Int?, _ reply: VarlinkReply) {
        var message = reply.message
        defer { Wipe.bytes(&message) }
        if let id {
            var tagged = Array(#"{"id":"#.utf8) + Array(String(id).utf8)
            tagged += message.count > 2 ? [UInt8(ascii: ",")] + message.dropFirst() : [UInt8(ascii: "}")]
            Wipe.bytes(&message)
            message = tagged
        }
        guard message.count <= NativeMessaging.maximumOutgoing else {
            send(
                id,
                VarlinkError(
                    Browser.ReplyTooLarge(
                        message:
                            "keyportd's reply of \(message.count) bytes is larger than the \(NativeMessaging.maximumOutgoing) a browser takes"
                    )
                )
            )
            return
        }
        let delivered = writing.withLock { _ in NativeMessaging.writeMessage(message, to: output) }
        if !delivered {
            // The browser is gone: nothing is left to answer.
            exit(0)
        }
    }
}
