#ifndef CKEYPORTSYSTEM_H
#define CKEYPORTSYSTEM_H

// The few Linux calls KeyportSystem needs that Swift's Glibc module does not offer: `struct ucred`
// is declared only under _GNU_SOURCE, SO_PEERPIDFD is newer than the kernel headers of Debian 12
// and Ubuntu 22.04, glibc declares pidfd_open only from 2.36, and the module leaves out statfs.
// Each takes plain C types and, on failure, returns -1 with errno set.

#ifdef __linux__

/// The process id, user id and group id the kernel recorded for the peer of the Unix socket
/// `socket` when it connected (SO_PEERCRED). The pid is 0 when the peer runs in a pid namespace
/// this process cannot see.
int ckp_peer_credentials(int socket, int *pid, unsigned int *uid, unsigned int *gid);

/// A pidfd for the process that connected to the Unix socket `socket` (SO_PEERPIDFD, Linux 6.5 and
/// later; ENOPROTOOPT before). Close-on-exec.
int ckp_peer_pidfd(int socket);

// The number of the SO_PEERPIDFD socket option, for code that reads socket options its own way.
int ckp_peer_pidfd_option(void);

/// The next connection on the listening `socket`, close-on-exec from the start (accept4 with
/// SOCK_CLOEXEC: no process started meanwhile inherits it); -1 with errno as accept sets it.
int ckp_accept(int socket);

/// A pidfd for the process `pid` (pidfd_open, Linux 5.3 and later; ENOSYS before). Close-on-exec.
int ckp_pidfd_open(int pid);

/// 1 while the process of `pidfd` has not exited, 0 once it has (a zombie counts as exited), without
/// waiting: a pidfd polls readable when its process exits, whoever has its pid number by then.
int ckp_pidfd_alive(int pidfd);

/// Gives the memory the allocator holds free back to the system (glibc's malloc_trim); does
/// nothing with another C library. Returns 1 when memory was released.
int ckp_release_free_memory(void);

/// Makes this process undumpable (prctl PR_SET_DUMPABLE 0): no core dump, and no process of the
/// same user without CAP_SYS_PTRACE can ptrace it or read its memory, environment or descriptors
/// through /proc (which the kernel gives to root). Undone by exec.
int ckp_make_undumpable(void);

/// The type of the filesystem `path` is on (statfs's f_type, such as FUSE_SUPER_MAGIC), in `type`.
int ckp_filesystem_type(const char *path, long *type);

// Descriptors passed as systemd's Varlink passes them (SCM_RIGHTS beside a message's bytes), and
// sealed memory files to pass: glibc's CMSG_* macros and the F_SEAL_* constants are not
// importable into Swift.

/// Sends `length` bytes of `bytes` (at least one) on the Unix stream socket `socket`, with the
/// `count` descriptors of `descriptors` (at most 16) attached to them; MSG_NOSIGNAL, and
/// MSG_DONTWAIT when `wait` is 0 (then EAGAIN when the socket's buffer is full). Returns the
/// number of bytes sent (the descriptors go with the first byte), or -1 with errno set.
long ckp_send_with_descriptors(
    int socket, const void *bytes, unsigned long length, const int *descriptors, int count, int wait);

/// Receives up to `length` bytes into `bytes` from the Unix stream socket `socket`, and the
/// descriptors that came with them into `descriptors` (room for `capacity`; each close-on-exec),
/// their number in `received`. `truncated` is set to 1 when more came than there was room for:
/// the kernel closed those, and the caller should refuse the message. Returns the number of bytes
/// (0 at the end of the stream), or -1 with errno set.
long ckp_receive_with_descriptors(
    int socket, void *bytes, unsigned long length, int *descriptors, int capacity, int *received, int *truncated);

/// A new anonymous memory file (memfd_create with MFD_CLOEXEC | MFD_ALLOW_SEALING) named `name`
/// (for /proc only).
int ckp_sealable_memory_file(const char *name);

/// Seals the memory file `descriptor` against writing, shrinking, growing and further sealing.
int ckp_seal_memory_file(int descriptor);

/// 1 when `descriptor` is a file of shared memory (tmpfs, where memfd_create puts its files
/// unless asked for huge pages), 0 when it is on another filesystem, -1 with errno set.
int ckp_is_shared_memory(int descriptor);

/// The seals of `descriptor` (F_GET_SEALS; EINVAL for a file that is not a memory file), as
/// ckp_seals_written (F_SEAL_WRITE), ckp_seals_shrink, ckp_seals_grow and ckp_seals_seal flags.
int ckp_memory_file_seals(int descriptor);

int ckp_seal_write_flag(void);
int ckp_seal_shrink_flag(void);
int ckp_seal_grow_flag(void);
int ckp_seal_seal_flag(void);

#endif

#endif
