import Foundation

extension MemoryFile {
    /// The file's bytes as `Data` that reads a mapping of the file (no copy is made; a page the
    /// `Data` is written through becomes a private copy), unmapped when the last copy of the
    /// `Data` goes.
    ///
    /// - Throws: ``MemoryFileError`` when the file cannot be mapped.
    package func mappedData() throws(MemoryFileError) -> Data {
        let mapping = try map(copyOnWrite: true)
        guard let address = mapping.baseAddress else { return Data() }
        return Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: address),
            count: mapping.count,
            deallocator: .custom { _, _ in MemoryFile.unmap(mapping) }
        )
    }
}
