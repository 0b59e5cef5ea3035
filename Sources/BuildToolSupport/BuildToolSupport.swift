// What the build-tool plugins' programs (KeyportEmbed, VarlinkGenerate) share: reading and
// writing text files, failing with a message, and writing text as a Swift literal. The standard
// library and libc only: these programs run in every build of the package, app authors' too.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes `PROGRAM: message` to standard error and exits 1, which fails the build step.
package func fail(_ message: String) -> Never {
    let program = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? "tool"
    let bytes = Array("\(program): \(message)\n".utf8)
    _ = write(2, bytes, bytes.count)
    exit(1)
}

/// The whole file at `path`, which must be UTF-8; `nil` when there is no such file.
package func readText(_ path: String) -> String? {
    guard let file = fopen(path, "rb") else { return nil }
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

/// Writes `text` to `path` unless the file holds it already, so that an unchanged input does not
/// make the build compile the module again.
package func writeText(_ text: String, to path: String) {
    if readText(path) == text { return }
    guard let file = fopen(path, "wb") else { fail("cannot write \(path)") }
    let bytes = Array(text.utf8)
    guard fwrite(bytes, 1, bytes.count, file) == bytes.count, fclose(file) == 0 else { fail("cannot write \(path)") }
}

/// A raw multi-line string literal of `text`: enough `#`s that nothing in it ends the literal
/// early, each line indented by `indent` (which the literal takes off again).
package func rawStringLiteral(_ text: String, indent: String = "") -> String {
    var hashes = "#"
    while text.contains("\"\"\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    // The literal's last line ends without a line break: a text that ends with one keeps it as an
    // empty last line.
    if lines.last == "" { lines.removeLast() }
    var out = "\(hashes)\"\"\"\n"
    for line in lines { out += line.isEmpty ? "\n" : "\(indent)\(line)\n" }
    if text.hasSuffix("\n") { out += "\n" }
    return out + "\(indent)\"\"\"\(hashes)"
}
