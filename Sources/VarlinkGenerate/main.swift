// Writes the Swift for a Varlink interface definition (SwiftGenerator says what). Run by the
// VarlinkInterfaces build-tool plugin, once per `.varlink` file of a target:
//
//   VarlinkGenerate MODULE INPUT.varlink OUTPUT.swift
//
// It needs only the standard library, libc and VarlinkGeneration: it runs in every build that depends on
// Keyport's interfaces, app authors' too.
import VarlinkGeneration

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

func fail(_ message: String) -> Never {
    let bytes = Array("VarlinkGenerate: \(message)\n".utf8)
    _ = write(2, bytes, bytes.count)
    exit(1)
}

/// The whole file at `path`, which must be UTF-8.
func read(_ path: String) -> String {
    guard let file = fopen(path, "rb") else { fail("cannot open \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { break }
        bytes += buffer[0..<count]
    }
    guard let text = String(validating: bytes, as: UTF8.self) else { fail("\(path) is not UTF-8") }
    return text
}

/// Writes `text` to `path` unless the file already holds it, so an unchanged definition does not
/// make the build recompile its module.
func write(_ text: String, to path: String) {
    if let file = fopen(path, "rb") {
        fclose(file)
        if read(path) == text { return }
    }
    guard let file = fopen(path, "wb") else { fail("cannot write \(path)") }
    let bytes = Array(text.utf8)
    guard fwrite(bytes, 1, bytes.count, file) == bytes.count, fclose(file) == 0 else { fail("cannot write \(path)") }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3 else { fail("usage: VarlinkGenerate MODULE INPUT.varlink OUTPUT.swift") }
do {
    var fileName = String(arguments[1].split(separator: "/").last ?? "")
    if fileName.hasSuffix(".varlink") { fileName.removeLast(".varlink".count) }
    let generator = try SwiftGenerator(definition: read(arguments[1]), fileName: fileName, module: arguments[0])
    write(try generator.source(), to: arguments[2])
} catch {
    fail("\(arguments[1]): \(error)")
}
