#ifdef __linux__

// For struct ucred.
#define _GNU_SOURCE

#include "CKeyportSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <malloc.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

// Linux 6.5 added SO_PEERPIDFD; older kernel headers lack it. 77 is its value in asm-generic,
// which every architecture Swift runs on uses (x86_64, aarch64, armv7, riscv64, ppc64le, s390x);
// only alpha, mips, parisc and sparc number socket options their own way.
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int ckp_peer_credentials(int socket, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int ckp_peer_pidfd(int socket) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) {
        return -1;
    }
    return pidfd;
}

int ckp_peer_pidfd_option(void) {
    return SO_PEERPIDFD;
}

int ckp_release_free_memory(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}

int ckp_accept(int socket) { return accept4(socket, NULL, NULL, SOCK_CLOEXEC); }

int ckp_pidfd_open(int pid) {
    // The system call itself rather than glibc's wrapper, which only glibc 2.36 and later declare.
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int ckp_pidfd_alive(int pidfd) {
    struct pollfd entry = {.fd = pidfd, .events = POLLIN};
    int ready;
    do {
        ready = poll(&entry, 1, 0);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) {
        return -1;
    }
    if (entry.revents & POLLNVAL) {
        errno = EBADF;
        return -1;
    }
    // Readable (POLLIN) once the process has exited; POLLHUP too once it has been reaped.
    return ready == 0;
}

int ckp_filesystem_type(const char *path, long *type) {
    struct statfs filesystem;
    if (statfs(path, &filesystem) != 0) {
        return -1;
    }
    *type = (long)filesystem.f_type;
    return 0;
}

int ckp_make_undumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

// Older headers lack memfd's and sealing's constants; their values are the kernel's, the same on
// every architecture.
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif

#define CKP_MAXIMUM_DESCRIPTORS 16
/// The most one message can carry (the kernel's SCM_MAX_FD): a receiver takes them all in, keeps
/// what it has room for and closes the rest, so that a message is never cut short unseen.
#define CKP_RECEIVABLE_DESCRIPTORS 253

long ckp_send_with_descriptors(
    int socket, const void *bytes, unsigned long length, const int *descriptors, int count, int wait) {
    if (length == 0 || count < 0 || count > CKP_MAXIMUM_DESCRIPTORS) {
        errno = EINVAL;
        return -1;
    }
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * CKP_MAXIMUM_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
    if (count > 0) {
        message.msg_control = control.buffer;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
        memcpy(CMSG_DATA(header), descriptors, sizeof(int) * (size_t)count);
    }
    return (long)sendmsg(socket, &message, MSG_NOSIGNAL | (wait ? 0 : MSG_DONTWAIT));
}

long ckp_receive_with_descriptors(
    int socket, void *bytes, unsigned long length, int *descriptors, int capacity, int *received, int *truncated) {
    *received = 0;
    *truncated = 0;
    struct iovec vector = {.iov_base = bytes, .iov_len = length};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * CKP_RECEIVABLE_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    long count = (long)recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (count < 0) {
        return -1;
    }
    if (message.msg_flags & MSG_CTRUNC) {
        *truncated = 1;
    }
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        int arrived = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *data = (int *)CMSG_DATA(header);
        for (int index = 0; index < arrived; index++) {
            if (*received < capacity) {
                descriptors[(*received)++] = data[index];
            } else {
                // No room: closed here rather than leaked, and the message is refused.
                close(data[index]);
                *truncated = 1;
            }
        }
    }
    return count;
}

int ckp_sealable_memory_file(const char *name) {
    return (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int ckp_seal_memory_file(int descriptor) {
    return fcntl(descriptor, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
}

int ckp_is_shared_memory(int descriptor) {
    struct statfs filesystem;
    if (fstatfs(descriptor, &filesystem) != 0) {
        return -1;
    }
    // TMPFS_MAGIC: shmem, where memfd_create's files live (hugetlbfs has its own).
    return filesystem.f_type == 0x01021994;
}

int ckp_memory_file_seals(int descriptor) {
    return fcntl(descriptor, F_GET_SEALS);
}

int ckp_seal_write_flag(void) { return F_SEAL_WRITE; }
int ckp_seal_shrink_flag(void) { return F_SEAL_SHRINK; }
int ckp_seal_grow_flag(void) { return F_SEAL_GROW; }
int ckp_seal_seal_flag(void) { return F_SEAL_SEAL; }

#endif
