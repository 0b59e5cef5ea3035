import ArgumentParser
import AuthenticationServices
import Foundation
import KeyportCommandLine
import KeyportSystem
import WebAuthentication

struct URLSchemeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "url-scheme",
        abstract: "Receive sign-in callbacks to a private-use URL scheme (com.example.app:/callback).",
        discussion: """
            register makes this keyport the desktop's handler for a scheme; when the browser is redirected \
            to that scheme, the desktop runs 'keyport url-scheme open URL', which hands the URL to the \
            Keyport session waiting for it. Any application can claim a scheme (the last one registered \
            wins), so prefer reverse-DNS names you control, and the loopback redirect where the server \
            allows it.
            """,
        subcommands: [Register.self, Unregister.self, Open.self]
    )
}

/// The URL without what may be secret: scheme, host and path only — never the query (it holds the
/// authorization code), the fragment or user information.
func redactedCallback(_ url: URL) -> String {
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme
    else {
        return "a URL that cannot be parsed"
    }
    let host = components.host.map { "//\($0)" } ?? ""
    return "\(scheme):\(host)\(components.path)"
}

extension SchemeCallbackError {
    /// As a command-line failure: a bad name or an unusable URL is the input's fault (1); a missing
    /// tool, an unsafe directory or a file that cannot be written is the system's (2).
    var failure: CommandError {
        switch code {
        case .invalidScheme, .urlTooLong: .invalid(message)
        default: .io(message)
        }
    }
}

extension URLSchemeCommand {
    struct Register: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make this keyport the desktop's handler for a URL scheme.",
            discussion: """
                Writes $XDG_DATA_HOME/applications/keyport-url-NAME.desktop (XDG_DATA_HOME defaults to \
                ~/.local/share) running this keyport executable as 'url-scheme open %u', and makes it the \
                default for x-scheme-handler/NAME with xdg-mime (from xdg-utils). Exit status: 0, 1 for an \
                invalid name, 2 when xdg-mime is missing or a file cannot be written.
                """
        )

        @Argument(help: "The scheme, such as com.example.app (letters, digits, '+', '-', '.'; starting with a letter).")
        var name: String

        func run() throws {
            guard let executable = Executable.own else {
                throw CommandError.io(Executable.unknown)
            }
            let registration: SchemeRegistration.Registration
            do {
                registration = try SchemeRegistration().register(
                    scheme: name,
                    handlerCommand: [executable, "url-scheme", "open"]
                )
            } catch {
                throw error.failure
            }
            FileHandle.write("wrote \(registration.desktopFile.path):\n")
            FileHandle.write(registration.contents.split(separator: "\n").map { "  \($0)\n" }.joined())
            FileHandle.write("made it the default for \(registration.mimeType) (xdg-mime)\n")
            if !registration.updatedDesktopDatabase {
                FileHandle.write(
                    "update-desktop-database is not installed or failed; the default set with xdg-mime is enough\n"
                )
            }
        }
    }

    struct Unregister: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop handling a URL scheme registered with 'register'.",
            discussion: """
                Removes keyport-url-NAME.desktop and takes it out of $XDG_CONFIG_HOME/mimeapps.list \
                (another application's claim on the scheme is left alone). Exit status: 0 (also when \
                nothing was registered, which it says), 1 for an invalid name, 2 when a file cannot be \
                changed.
                """
        )

        @Argument(help: "The scheme given to 'register'.")
        var name: String

        func run() throws {
            let removed: Bool
            do {
                removed = try SchemeRegistration().unregister(scheme: name)
            } catch {
                throw error.failure
            }
            let scheme = name.lowercased()
            FileHandle.write(
                removed ? "keyport no longer handles \(scheme): URLs\n" : "nothing was registered for \(scheme): URLs\n"
            )
        }
    }

    struct Open: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Hand a callback URL to the Keyport session waiting for it (what the desktop runs).",
            discussion: """
                Offers the URL to each session waiting in $XDG_RUNTIME_DIR/keyport/callbacks \
                (~/.cache/keyport/run/callbacks without XDG_RUNTIME_DIR). Exit status: 0 when a session \
                accepted it, 1 when none did (the URL was not used), 2 when the socket directory is not \
                private to you. The URL's query, which holds the authorization code, is never printed.
                """
        )

        @Argument(help: "The callback URL.")
        var url: String

        func run() async throws {
            guard let callback = URL(string: url), callback.scheme != nil else {
                throw CommandError.invalid("the argument is not a URL with a scheme")
            }
            let accepted: Bool
            do {
                accepted = try await SchemeCallbackDelivery.deliver(callback)
            } catch let error as SchemeCallbackError {
                throw error.failure
            }
            guard accepted else {
                throw CommandError.invalid(
                    "no Keyport session is waiting for this URL (\(redactedCallback(callback))); it was not used"
                )
            }
            FileHandle.write("handed \(redactedCallback(callback)) to the waiting Keyport session\n")
        }
    }
}
