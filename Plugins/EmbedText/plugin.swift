import PackagePlugin

/// Embeds a target's `.dat` files (the Public Suffix List snapshot) in its code
/// (`EmbeddedText.texts`), so the programs built from it read nothing from a resource bundle at run
/// time: installed, they run with the build tree gone. (Interface definitions are the
/// VarlinkInterfaces plugin's.)
@main
struct EmbedText: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let inputs = module.sourceFiles.filter { $0.url.pathExtension == "dat" }.map(\.url)
        guard !inputs.isEmpty else { return [] }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedText.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count == 1 ? "a text file" : "\(inputs.count) text files") in \(target.name)",
                executable: try context.tool(named: "KeyportEmbed").url,
                arguments: [output.path(percentEncoded: false)]
                    + inputs.map {
                        "\($0.deletingPathExtension().lastPathComponent)=\($0.path(percentEncoded: false))"
                    },
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}
