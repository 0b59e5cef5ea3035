import PackagePlugin

/// Generates the Swift of a target's Varlink interface definitions (`*.varlink`): their types,
/// method and error names, and their definitions for introspection, embedded in the code
/// (VarlinkGeneration's SwiftGenerator says how). The definition is the only place an interface is
/// written; callers use the generated names. All of a target's definitions are generated in one
/// step, so that a type two of them define alike is one Swift type.
@main
struct VarlinkInterfaces: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let inputs = module.sourceFiles.filter { $0.url.pathExtension == "varlink" }.map(\.url)
        guard !inputs.isEmpty else { return [] }
        let directory = context.pluginWorkDirectoryURL
        let outputs = inputs.map { directory.appending(path: "\($0.deletingPathExtension().lastPathComponent).swift") }
        return [
            .buildCommand(
                displayName:
                    "Generating the Swift of \(inputs.count == 1 ? "an interface definition" : "\(inputs.count) interface definitions") in \(target.name)",
                executable: try context.tool(named: "VarlinkGenerate").url,
                arguments: [module.moduleName, directory.path(percentEncoded: false)]
                    + inputs.map { $0.path(percentEncoded: false) },
                inputFiles: inputs,
                outputFiles: outputs
            )
        ]
    }
}
