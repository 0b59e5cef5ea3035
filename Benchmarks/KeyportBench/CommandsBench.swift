import CredentialExchangeFormat
import Foundation

// The CXF commands people run, measured as whole processes (start-up, reading the file, writing
// the output), beside processes that do the same with Foundation's JSONDecoder and JSONEncoder on
// the Codable mirror (Mirror.swift), in the same run.

/// Runs `program` with `arguments`, its output thrown away; returns the seconds it took.
private func timeProcess(_ program: String, _ arguments: [String]) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let start = DispatchTime.now().uptimeNanoseconds
    try process.run()
    process.waitUntilExit()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    guard process.terminationStatus == 0 else {
        print("\(program) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        exit(1)
    }
    return seconds
}

/// `keyport cxf validate` and `keyport cxf fmt` of a document of `items` items, against
/// `KeyportBench foundation-decode` and `foundation-fmt`, `rounds` times each, interleaved.
func cxfCommandsBenchmark(items: Int, rounds: Int) throws {
    let build = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    let keyport = build.appendingPathComponent("keyport-cli").path
    let bench = build.appendingPathComponent("KeyportBench").path
    guard FileManager.default.isExecutableFile(atPath: keyport) else {
        print("\(keyport) is missing: swift build -c release --product keyport-cli first")
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
