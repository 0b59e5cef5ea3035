import Foundation
import PackagePlugin

/// Generates the Swift of the CXF credential types made only of editable fields from their one
/// definition, `FieldCredentials.cxftypes` in CredentialExchangeFormat (CXFTypesGenerate says how):
/// there, the `CXF` structs and their schema tables; in a target that depends on it
/// (AuthenticationServices), Apple's structs of the same credentials, paired member by member.
@main
struct CXFTypes: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let definitions = { (module: SourceModuleTarget) -> [URL] in
            module.sourceFiles.filter { $0.url.pathExtension == "cxftypes" }.map(\.url)
        }
        let own = definitions(module)
        let inherited = module.recursiveTargetDependencies.compactMap { $0 as? SourceModuleTarget }
            .flatMap { definitions($0) }
        let (mode, inputs) = own.isEmpty ? ("apple", inherited) : ("cxf", own)
        guard inputs.count == 1, let input = inputs.first else {
            throw CXFTypesError(message: "\(target.name) sees \(inputs.count) credential type definitions, not one")
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "FieldCredentialTypes.swift")
        return [
            .buildCommand(
                displayName: "Generating the field-only credential types of \(target.name)",
                executable: try context.tool(named: "CXFTypesGenerate").url,
                arguments: [mode, output.path(percentEncoded: false), input.path(percentEncoded: false)],
                inputFiles: [input],
                outputFiles: [output]
            )
        ]
    }
}

struct CXFTypesError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
