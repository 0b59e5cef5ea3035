import CKeyportSystem
import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("sealed memory files passed as descriptors")
struct MemoryFileTests {
    /// A connected pair of Unix stream sockets.
    private func socketPair() throws -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        return (pair[0], pair[1])
    }

    @Test("a document goes over a socket as a descriptor, and the receiver maps the same bytes; nobody can change them")
    func passed() throws {
        let document = Array(#"{"version":{"major":1,"minor":0},"accounts":[]}"#.utf8)
        let file = try document.withUnsafeBytes { try MemoryFile(name: "cxf", contents: $0) }
        let (sender, receiver) = try socketPair()
        defer {
            close(sender)
            close(receiver)
        }
        let message = Array(#"{"method":"x"}"#.utf8) + [0]
        let sent = try message.withUnsafeBytes {
            try DescriptorPassing.send($0, descriptors: [file.descriptor], on: sender)
        }
        #expect(sent == message.count)
        var buffer = [UInt8](repeating: 0, count: 256)
        let (count, descriptors) = try buffer.withUnsafeMutableBytes {
            try DescriptorPassing.receive(into: $0, on: receiver)
        }
        #expect(Array(buffer.prefix(count)) == message)
        #expect(descriptors.count == 1 && descriptors[0] != file.descriptor)
        let received = try MemoryFile(checking: descriptors[0])
        #expect(received.size == document.count)
        #expect(try received.withBytes { Array($0) } == document)

        // The sender's own descriptor cannot write, shrink or grow it any more: the receiver's
        // check cannot be raced.
        #expect(pwrite(file.descriptor, "X", 1, 0) == -1 && errno == EPERM)
        #expect(ftruncate(file.descriptor, 1) == -1 && errno == EPERM)
        #expect(ftruncate(file.descriptor, off_t(document.count + 1)) == -1 && errno == EPERM)
        #expect(mmap(nil, document.count, PROT_READ | PROT_WRITE, MAP_SHARED, file.descriptor, 0) == MAP_FAILED)
        #expect(try received.withBytes { Array($0) } == document)
    }

    @Test("a descriptor that is not a sealed memory file is refused, saying what it lacks, and closed")
    func refused() throws {
        // A memory file its sender could still write to.
        let open = ckp_sealable_memory_file("open")
        try #require(open >= 0)
        #expect(write(open, "abc", 3) == 3)
        let unsealed = #expect(throws: MemoryFileError.self) { try MemoryFile(checking: open) }
        #expect(unsealed?.code == .notSealed)
        #expect(unsealed?.description.contains("F_SEAL_WRITE, F_SEAL_SHRINK, F_SEAL_GROW") == true)

        // Sealed against writing only: it could still grow.
        let partly = ckp_sealable_memory_file("partly")
        try #require(partly >= 0)
        #expect(fcntl(partly, 1033, ckp_seal_write_flag()) == 0)  // F_ADD_SEALS
        let growing = #expect(throws: MemoryFileError.self) { try MemoryFile(checking: partly) }
        #expect(growing?.code == .notSealed)
        #expect(growing?.description.contains("F_SEAL_SHRINK, F_SEAL_GROW") == true)

        // Sealed whole, but sized with ftruncate and never written: holes, which cost its sender
        // nothing and its reader a page each.
        let sparse = ckp_sealable_memory_file("sparse")
        try #require(sparse >= 0)
        #expect(ftruncate(sparse, 1 << 20) == 0)
        #expect(ckp_seal_memory_file(sparse) == 0)
        let holes = #expect(throws: MemoryFileError.self) { try MemoryFile(checking: sparse) }
        #expect(holes?.code == .sparse)
        #expect(holes?.description.contains("has holes") == true)

        // Sealed and written, but larger than the receiver takes.
        let large = try Array(repeating: UInt8(ascii: "x"), count: 10_000).withUnsafeBytes {
            try MemoryFile(name: "large", contents: $0)
        }
        let tooLarge = #expect(throws: MemoryFileError.self) {
            try MemoryFile(checking: dup(large.descriptor), maximumSize: 9_999)
        }
        #expect(tooLarge?.code == .tooLarge)
        #expect(tooLarge?.description.contains("more than the 9999 taken") == true)
        #expect(!MemoryFile.isMemoryFile(-1))
        #expect(MemoryFile.isMemoryFile(large.descriptor))

        // A pipe is no memory file; once refused, nobody holds its reading end any more.
        var pipe: [Int32] = [-1, -1]
        try #require(Glibc.pipe(&pipe) == 0)
        defer { close(pipe[1]) }
        let notAFile = #expect(throws: MemoryFileError.self) { try MemoryFile(checking: pipe[0]) }
        #expect(notAFile?.code == .notSealed)
        #expect(notAFile?.description.contains("not a sealed memory file") == true)
        #expect(!MemoryFile.isMemoryFile(pipe[1]))
        #expect(Pipes.nobodyReads(pipe[1]), "the refused descriptor is closed")

        // An ordinary file is no memory file either.
        let path = NSTemporaryDirectory() + "kp-memfd-\(getpid())"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("abc".utf8)))
        defer { unlink(path) }
        let ordinary = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        try #require(ordinary >= 0)
        let notMemory = #expect(throws: MemoryFileError.self) { try MemoryFile(checking: ordinary) }
        #expect(notMemory?.code == .notSealed)
        #expect(notMemory?.description.contains("not a sealed memory file") == true)
    }

    @Test("more descriptors than the receiver takes: all of them closed, the message refused")
    func tooMany() throws {
        let (sender, receiver) = try socketPair()
        defer {
            close(sender)
            close(receiver)
        }
        // Three pipes' reading ends, sent and then closed here: the receiver's copies are the
        // only ones left.
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var pipe: [Int32] = [-1, -1]
            try #require(Glibc.pipe(&pipe) == 0)
            pipes.append(pipe)
        }
        defer { for pipe in pipes { close(pipe[1]) } }
        _ = try [UInt8(1)].withUnsafeBytes {
            try DescriptorPassing.send($0, descriptors: pipes.map { $0[0] }, on: sender)
        }
        for pipe in pipes { close(pipe[0]) }
        #expect(throws: MemoryFileError.self) {
            try [UInt8(2)].withUnsafeBytes {
                _ = try DescriptorPassing.send($0, descriptors: Array(repeating: 0, count: 17), on: sender)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 8)
        let refused = #expect(throws: MemoryFileError.self) {
            try buffer.withUnsafeMutableBytes { _ = try DescriptorPassing.receive(into: $0, on: receiver, maximum: 2) }
        }
        #expect(refused?.code == .tooManyDescriptors)
        #expect(refused?.description.contains("more than 2 descriptors") == true)
        // None of the three stayed open in this process.
        #expect(pipes.allSatisfy { Pipes.nobodyReads($0[1]) })
    }
}
