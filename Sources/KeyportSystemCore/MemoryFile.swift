import CKeyportSystem
import KeyportErrors

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a memory file could not be made, or a descriptor is not one that can be trusted to hold
/// still: what is wrong, in a sentence.
package struct MemoryFileError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<MemoryFileError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<MemoryFileError> {
    /// The kernel refused a call (making, writing, sealing, mapping, sending, receiving).
    package static let systemCallFailed = Self(rawValue: "system-call-failed")
    /// The descriptor is not a memory file sealed against every change.
    package static let notSealed = Self(rawValue: "not-sealed")
    /// The file is larger than the receiver takes.
    package static let tooLarge = Self(rawValue: "too-large")
    /// The file has holes: its bytes were never all written.
    package static let sparse = Self(rawValue: "sparse")
    /// More descriptors came with one message than the receiver takes.
    package static let tooManyDescriptors = Self(rawValue: "too-many-descriptors")
}

/// A document in an anonymous memory file (memfd), sealed so that nobody — its writer included —
/// can change, shrink or grow it any more: what a credential exchange passes from process to
/// process as a descriptor (SCM_RIGHTS, as systemd's Varlink passes descriptors) instead of
/// copying the bytes into messages.
///
/// The receiver checks the seals (``init(checking:)``) before it reads: a descriptor its sender
/// could still write through could change the document between the check and the use. Reading
/// maps the file read-only (``withBytes(_:)``), so a 50 MB document is looked at where it is.
package final class MemoryFile: Sendable {
    /// The file's descriptor, owned: closed when this is released.
    package let descriptor: Int32
    /// Its size in bytes, fixed by the seals.
    package let size: Int

    /// The seals a document's file must carry: against writing, shrinking and growing.
    private static var required: Int32 { ckp_seal_write_flag() | ckp_seal_shrink_flag() | ckp_seal_grow_flag() }

    /// A new memory file named `name` (shown in /proc only) holding `contents`, sealed.
    ///
    /// - Throws: ``MemoryFileError`` when the kernel refuses (no memfd, or out of memory).
    package init(name: String, contents: UnsafeRawBufferPointer) throws(MemoryFileError) {
        let descriptor = ckp_sealable_memory_file(name)
        guard descriptor >= 0 else {
            throw MemoryFileError(.systemCallFailed, "cannot make a memory file: \(Self.reason())")
        }
        var written = 0
        while written < contents.count {
            let count = write(descriptor, contents.baseAddress! + written, contents.count - written)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = count == 0 ? "it took nothing" : Self.reason()
                close(descriptor)
                throw MemoryFileError(.systemCallFailed, "cannot write the memory file: \(reason)")
            }
            written += count
        }
        guard ckp_seal_memory_file(descriptor) == 0 else {
            let reason = Self.reason()
            close(descriptor)
            throw MemoryFileError(.systemCallFailed, "cannot seal the memory file: \(reason)")
        }
        self.descriptor = descriptor
        size = contents.count
    }

    /// Takes over `descriptor`, received from another process, once it is a memory file sealed
    /// against writing, shrinking and growing; else closes it.
    ///
    /// - Throws: ``MemoryFileError`` saying which it is not.
    package init(checking descriptor: Int32, maximumSize: Int = .max) throws(MemoryFileError) {
        let seals = ckp_memory_file_seals(descriptor)
        guard seals >= 0 else {
            close(descriptor)
            throw MemoryFileError(
                .notSealed,
                "the descriptor is not a sealed memory file (memfd_create with MFD_ALLOW_SEALING)"
            )
        }
        // Shared memory, as memfd_create makes it: a huge-page file would map in pages larger than
        // its size says.
        guard ckp_is_shared_memory(descriptor) == 1 else {
            close(descriptor)
            throw MemoryFileError(.notSealed, "the descriptor is not a memory file of ordinary shared memory")
        }
        var missing: [String] = []
        if seals & ckp_seal_write_flag() == 0 { missing.append("F_SEAL_WRITE") }
        if seals & ckp_seal_shrink_flag() == 0 { missing.append("F_SEAL_SHRINK") }
        if seals & ckp_seal_grow_flag() == 0 { missing.append("F_SEAL_GROW") }
        guard missing.isEmpty else {
            close(descriptor)
            throw MemoryFileError(
                .notSealed,
                "the memory file is not sealed with \(missing.joined(separator: ", ")): its sender could still change it"
            )
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = Self.reason()
            close(descriptor)
            throw MemoryFileError(.systemCallFailed, "cannot read the memory file's size: \(reason)")
        }
        guard Int(status.st_size) <= maximumSize else {
            close(descriptor)
            throw MemoryFileError(
                .tooLarge,
                "the memory file is \(status.st_size) bytes, more than the \(maximumSize) taken"
            )
        }
        // Every page written: a file truncated to a size and sealed, with holes, would cost its
        // sender nothing and its reader a fresh page for each hole read.
        guard Int(status.st_blocks) * 512 >= Int(status.st_size) else {
            close(descriptor)
            throw MemoryFileError(
                .sparse,
                "the memory file has holes: its \(status.st_size) bytes were never all written"
            )
        }
        self.descriptor = descriptor
        size = Int(status.st_size)
    }

    /// Whether `descriptor` is a memory file (it has seals to read): the one kind of descriptor a
    /// receiver keeps. Asked of the kernel's memory-file code only, so it answers at once whatever
    /// the descriptor is (a file on a FUSE mount, say, whose server could keep a `stat` waiting).
    package static func isMemoryFile(_ descriptor: Int32) -> Bool {
        ckp_memory_file_seals(descriptor) >= 0
    }

    deinit { close(descriptor) }

    /// Calls `body` with the file's bytes, mapped read-only (shared: no copy is made).
    ///
    /// - Throws: ``MemoryFileError`` when the file cannot be mapped; what `body` throws.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        let mapping = try map()
        defer { Self.unmap(mapping) }
        return try body(mapping)
    }

    /// The file's bytes, mapped (no copy is made), until ``unmap(_:)`` — which the caller must
    /// call, also after this object is gone: the mapping outlives the descriptor.
    ///
    /// - Parameter copyOnWrite: `false`: read-only, shared. `true`: writable, privately — a page
    ///   written to becomes this process's copy (the file itself cannot change), for memory
    ///   handed to code that may write to it.
    /// - Throws: ``MemoryFileError`` when the file cannot be mapped.
    package func map(copyOnWrite: Bool = false) throws(MemoryFileError) -> UnsafeRawBufferPointer {
        guard size > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let (protection, sharing) = copyOnWrite ? (PROT_READ | PROT_WRITE, MAP_PRIVATE) : (PROT_READ, MAP_SHARED)
        guard let address = mmap(nil, size, protection, sharing, descriptor, 0), address != MAP_FAILED else {
            throw MemoryFileError(.systemCallFailed, "cannot map the memory file: \(Self.reason())")
        }
        return UnsafeRawBufferPointer(start: address, count: size)
    }

    /// Ends a mapping ``map(copyOnWrite:)`` made.
    package static func unmap(_ mapping: UnsafeRawBufferPointer) {
        guard let address = mapping.baseAddress else { return }
        let unmapped = munmap(UnsafeMutableRawPointer(mutating: address), mapping.count)
        assert(unmapped == 0, "the mapping was made with this address and size")
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}

/// Messages with descriptors on Unix stream sockets: the bytes and, attached to them, open
/// descriptors the receiving process gets its own copies of (SCM_RIGHTS).
package enum DescriptorPassing {
    /// The most descriptors one message Keyport sends carries.
    package static let maximumDescriptors = 16
    /// The most descriptors one message can carry (the kernel's `SCM_MAX_FD`): the most a
    /// receiver can take (a Wayland compositor sends up to 28 at once).
    package static let maximumReceivable = 253

    /// Sends `bytes` (at least one) on `socket` with `descriptors` attached to the first of them;
    /// returns how many bytes went (the rest is the caller's to send, without descriptors).
    /// Unless `waiting`, a full socket buffer is an error at once instead of a wait.
    ///
    /// - Throws: ``MemoryFileError`` with the system's reason.
    package static func send(
        _ bytes: UnsafeRawBufferPointer,
        descriptors: [Int32],
        on socket: Int32,
        waiting: Bool = true
    ) throws(MemoryFileError) -> Int {
        while true {
            let sent = descriptors.withUnsafeBufferPointer { fds in
                ckp_send_with_descriptors(
                    socket,
                    bytes.baseAddress,
                    UInt(bytes.count),
                    fds.baseAddress,
                    Int32(fds.count),
                    waiting ? 1 : 0
                )
            }
            if sent < 0, errno == EINTR { continue }
            guard sent >= 0 else {
                throw MemoryFileError(.systemCallFailed, "cannot send: \(String(cString: strerror(errno)))")
            }
            return sent
        }
    }

    /// Receives into `buffer` what `socket` has, and the descriptors that came with it (each
    /// owned by the caller now).
    ///
    /// - Returns: the number of bytes (0 at the end of the stream) and the descriptors.
    /// - Throws: ``MemoryFileError`` with the system's reason, or when more descriptors came than
    ///   `maximum` (at most ``maximumReceivable``; those that came are closed: a message that
    ///   cannot be read whole is refused).
    package static func receive(
        into buffer: UnsafeMutableRawBufferPointer,
        on socket: Int32,
        maximum: Int = maximumDescriptors
    ) throws(MemoryFileError) -> (count: Int, descriptors: [Int32]) {
        var descriptors = [Int32](repeating: -1, count: max(0, min(maximum, maximumReceivable)))
        var received: Int32 = 0
        var truncated: Int32 = 0
        var count = 0
        repeat {
            count = descriptors.withUnsafeMutableBufferPointer { fds in
                ckp_receive_with_descriptors(
                    socket,
                    buffer.baseAddress,
                    UInt(buffer.count),
                    fds.baseAddress,
                    Int32(fds.count),
                    &received,
                    &truncated
                )
            }
        } while count < 0 && errno == EINTR
        guard count >= 0 else {
            throw MemoryFileError(.systemCallFailed, "cannot receive: \(String(cString: strerror(errno)))")
        }
        let arrived = Array(descriptors.prefix(Int(received)))
        guard truncated == 0 else {
            for descriptor in arrived { close(descriptor) }
            throw MemoryFileError(
                .tooManyDescriptors,
                "more than \(descriptors.count) descriptors came with one message"
            )
        }
        return (count, arrived)
    }
}
