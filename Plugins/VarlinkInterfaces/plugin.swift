import PackagePlugin

/// Generates the Swift for each Varlink interface definition (`*.varlink`) of a target: its types,
/// method and error names, and its definition for introspection, embedded in the code
/// (VarlinkGenerate's SwiftGenerator says how). The definition is the only place an interface is
/// written; callers use the generated names.
@main
struct VarlinkInterfaces: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "VarlinkGenerate").url
        return module.sourceFiles.filter { $0.url.pathExtension == "varlink" }.map { file in
            let name = file.url.deletingPathExtension().lastPathComponent
            let output = context.pluginWorkDirectoryURL.appending(path: "\(name).swift")
            return .buildCommand(
                displayName: "Generating the Swift of \(name).varlink",
                executable: tool,
                arguments: [
                    module.moduleName, file.url.path(percentEncoded: false), output.path(percentEncoded: false),
                ],
                inputFiles: [file.url],
                outputFiles: [output]
            )
        }
    }
}
