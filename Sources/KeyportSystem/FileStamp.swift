import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `stat` says of a file that changes whenever its contents do (which file it is, its size,
/// when it was last written), so that what was read from it can be kept until it changes: a file
/// replaced atomically is another inode, one written in place has a new modification time.
package struct FileStamp: Hashable, Sendable {
    private var file: FileIdentity
    private var size: Int64
    private var seconds: Int
    private var nanoseconds: Int

    /// The stamp of `path` (a link is followed); `nil` when there is no such file.
    package init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        file = FileIdentity(info)
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}
