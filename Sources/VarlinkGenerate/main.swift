// Writes the Swift of a target's Varlink interface definitions (SwiftGenerator says what). Run by
// the VarlinkInterfaces build-tool plugin, once per target, with all of its definitions:
//
//   VarlinkGenerate MODULE OUTPUT-DIRECTORY INPUT.varlink...
//
// Each INPUT gets OUTPUT-DIRECTORY/NAME.swift (NAME: its file name without `.varlink`). They are
// generated together so that a type two interfaces define alike is one Swift type. It needs only
// the standard library, libc and VarlinkGeneration: it runs in every build that depends on
// Keyport's interfaces, app authors' too.
import BuildToolSupport
import VarlinkGeneration

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3 else { fail("usage: VarlinkGenerate MODULE OUTPUT-DIRECTORY INPUT.varlink...") }
let (module, directory) = (arguments[0], arguments[1])
var definitions: [(fileName: String, text: String)] = []
for path in arguments.dropFirst(2) {
    var fileName = String(path.split(separator: "/").last ?? "")
    if fileName.hasSuffix(".varlink") { fileName.removeLast(".varlink".count) }
    guard let text = readText(path) else { fail("cannot open \(path)") }
    definitions.append((fileName, text))
}
do {
    for (fileName, source) in try SwiftGenerator.sources(of: definitions, module: module) {
        writeText(source, to: "\(directory)/\(fileName).swift")
    }
} catch {
    fail("\(error)")
}
