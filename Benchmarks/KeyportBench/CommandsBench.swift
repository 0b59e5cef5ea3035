import CredentialExchangeFormat
import Foundation

// The CXF commands people run, measured as whole processes (start-up, reading the file, writing
// the output), beside processes that do the same with Foundation's JSONDecoder and JSONEncoder on
// the Codable mirror (Mirror.swift), in the same run.

/// Runs `program` with `arguments`, its output thrown away; returns the seconds it took, from
/// `posix_spawn` to `waitpid` (Foundation's `Process` notices an exit only at its next poll,
/// which rounds times to 50 ms).
private func timeProcess(_ program: String, _ arguments: [String]) throws -> Double {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([program] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
    guard spawned == 0 else {
        print("cannot start \(program): \(String(cString: strerror(spawned)))")
        exit(1)
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    guard status == 0 else {
        print("\(program) \(arguments.joined(separator: " ")) ended with status \(status)")
        exit(1)
    }
    return seconds
}

/// `keyport cxf validate` and `keyport cxf fmt` of a document of `items` items, against
/// `KeyportBench foundation-decode` and `foundation-fmt`, `rounds` times each, interleaved.
func cxfCommandsBenchmark(items: Int, rounds: Int) throws {
    // The command as a person runs it: `keyport`, which hands `cxf` to keyport-cli beside it.
    let keyport = buildDirectory.appendingPathComponent("keyport").path
    let bench = buildDirectory.appendingPathComponent("KeyportBench").path
    for program in [keyport, buildDirectory.appendingPathComponent("keyport-cli").path]
    where !FileManager.default.isExecutableFile(atPath: program) {
        print("\(program) is missing: swift build -c release --product keyport and --product keyport-cli first")
        exit(2)
    }
    let directory = privateDirectory("kp-cxf-commands")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("export.json").path
    let bytes = CXF.Encoder().encode(Generator.document(items: items))
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    print("cxf commands: \(items) items, \(bytes.count) bytes, \(rounds) rounds, whole processes")
    let commands: [(name: String, program: String, arguments: [String])] = [
        ("keyport cxf validate", keyport, ["cxf", "validate", file]),
        ("Foundation decode", bench, ["foundation-decode", file]),
        ("keyport cxf fmt", keyport, ["cxf", "fmt", file]),
        ("Foundation decode+encode", bench, ["foundation-fmt", file]),
    ]
    var times: [String: [Double]] = [:]
    for _ in 0..<rounds {
        for command in commands {
            times[command.name, default: []].append(try timeProcess(command.program, command.arguments))
        }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    for command in commands {
        let values = times[command.name]!
        print(
            String(
                format: "%-26@ median %7.1f ms, best %7.1f ms",
                command.name as NSString,
                median(values) * 1000,
                values.min()! * 1000
            )
        )
    }
    let validateRatios = zip(times["Foundation decode"]!, times["keyport cxf validate"]!).map { $0 / $1 }
    let fmtRatios = zip(times["Foundation decode+encode"]!, times["keyport cxf fmt"]!).map { $0 / $1 }
    print(
        String(
            format: "median ratio per round: validate %.2fx Foundation's decode; fmt %.2fx Foundation's decode+encode",
            median(validateRatios),
            median(fmtRatios)
        )
    )
}

/// Foundation's side of `keyport cxf validate`: read the file and decode it with `JSONDecoder`.
func foundationDecode(_ path: String) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    _ = try JSONDecoder().decode(MirrorHeader.self, from: data)
}

/// Foundation's side of `keyport cxf fmt`: read, decode, encode, write to standard output.
func foundationFormat(_ path: String) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let header = try JSONDecoder().decode(MirrorHeader.self, from: data)
    FileHandle.standardOutput.write(try JSONEncoder().encode(header))
}
