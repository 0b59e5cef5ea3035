import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Processes a test's programs started on their own, which outlive them (a vault's keeper, which
/// `keyport vault unlock` starts): found by an entry of their environment that only the test's
/// processes have, such as one of its private directories.
package enum Started {
    /// The processes running `program` (a name, matched against the end of `argv[0]`), with
    /// `arguments` first among the rest of their command line, whose environment holds `entry`
    /// (`NAME=VALUE`).
    package static func processes(
        running program: String,
        arguments: [String] = [],
        withEnvironment entry: String
    ) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name in
            guard let pid = pid_t(name),
                let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")),
                case let words = command.split(separator: 0).map({ String(decoding: $0, as: UTF8.self) }),
                let first = words.first, first.hasSuffix("/" + program),
                words.dropFirst().starts(with: arguments),
                let environment = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
            else { return nil }
            return environment.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == entry } ? pid : nil
        }
    }

    /// Ends (SIGTERM) the processes ``processes(running:withEnvironment:)`` finds.
    package static func stop(running program: String, withEnvironment entry: String) {
        for pid in processes(running: program, withEnvironment: entry) { kill(pid, SIGTERM) }
    }
}
