import Foundation
import KeyportCommandLine
import KeyportInterfaces
import Varlink

/// Runs `body` on a connection to keyportd, its failures made the command line's: what keyportd
/// refused is exit 1 with keyportd's message (after `refusal`, when given); keyportd not running or
/// unreachable is exit 2 saying how to start it; a reply this keyport cannot read is exit 2 too.
func withKeyportd<T>(
    refusal: String = "",
    environment: [String: String] = ProcessInfo.processInfo.environment,
    _ body: (VarlinkConnection) async throws -> T
) async throws -> T {
    do {
        return try await DaemonClient.withConnection(environment: environment, body)
    } catch let error as VarlinkError {
        throw CommandError.invalid(refusal + error.sentence)
    } catch let error as DaemonError {
        throw CommandError.io(error.description)
    } catch let error as VarlinkConnectionError {
        throw CommandError.io("keyportd: \(error)")
    } catch let error as CommandError {
        throw error
    } catch {
        throw CommandError.io(
            "keyportd's reply is not what this keyport understands (\(error)); keyport and keyportd may come from different builds"
        )
    }
}
