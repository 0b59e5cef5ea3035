#ifdef __linux__

// For struct ucred.
#define _GNU_SOURCE

#include "CKeyportSystem.h"

#include <errno.h>
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

#endif
