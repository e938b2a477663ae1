// SPDX-License-Identifier: MIT
#ifndef BLEGATE_CLINUX_SHIM_H
#define BLEGATE_CLINUX_SHIM_H

// Linux system calls that Swift's Glibc module does not export or cannot call directly
// (eventfd, epoll's packed event struct, recvmmsg with its control messages, posix_spawn's closefrom), kept apart
// from the libdbus shim as swift-nio keeps CNIOLinux apart.

#include <string.h>
#include <sys/eventfd.h>

/// The dispatcher's wake-up descriptor (Glibc's Swift module does not export eventfd).
static inline int clinux_wake_fd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

#include <sys/epoll.h>

/// epoll for AcquireNotify sockets. `struct epoll_event` is packed on x86-64, so Swift
/// never touches it: these wrappers carry a 64-bit key and the event bits separately.
static inline int clinux_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
static inline int clinux_epoll_add(int ep, int fd, unsigned long long key) {
    struct epoll_event ev;
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = key;
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}
static inline int clinux_epoll_del(int ep, int fd) {
    struct epoll_event ev = {0};
    return epoll_ctl(ep, EPOLL_CTL_DEL, fd, &ev);
}
static const unsigned int CLINUX_EPOLL_HANGUP = EPOLLHUP | EPOLLRDHUP | EPOLLERR;
/// Waits for up to `max` ready descriptors; fills `keys` and `events` side by side.
static inline int clinux_epoll_wait(int ep, unsigned long long *keys, unsigned int *events, int max, int timeout_ms) {
    struct epoll_event evs[64];
    if (max > 64) max = 64;
    int n = epoll_wait(ep, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) { keys[i] = evs[i].data.u64; events[i] = evs[i].events; }
    return n;
}

#include <sys/socket.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

/// recvmmsg(2)'s `struct mmsghdr`, which glibc declares only under _GNU_SOURCE.
struct clinux_mmsghdr { struct msghdr msg_hdr; unsigned int msg_len; };
enum { CLINUX_RECV_BATCH_MAX = 32 };

/// Asks the kernel to stamp every datagram `fd` receives with the wall-clock time it was
/// queued (SO_TIMESTAMPNS), which `clinux_recv_batch` then reports. Returns 0 or -1.
static inline int clinux_enable_arrival_stamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
}

/// Up to `max` (at most 32) datagrams from `fd` in one system call, without blocking:
/// datagram i lands at `buffer + i * slot` and its length in `lengths[i]`; with `arrivals`,
/// its kernel arrival time (CLOCK_REALTIME, ns since the epoch) in `arrivals[i]`, or 0 when
/// the socket carries none (see `clinux_enable_arrival_stamps`). Returns how many were
/// read, or -1 with errno (EAGAIN: none queued). At end of stream the kernel reports
/// zero-length datagrams.
static inline int clinux_recv_batch(int fd, unsigned char *buffer, int slot, int max, int *lengths, long long *arrivals) {
    struct clinux_mmsghdr msgs[CLINUX_RECV_BATCH_MAX];
    struct iovec iov[CLINUX_RECV_BATCH_MAX];
    // Room for one SCM_TIMESTAMPNS message per datagram, aligned as cmsg(3) requires.
    union { char bytes[CMSG_SPACE(sizeof(struct timespec))]; struct cmsghdr align; } control[CLINUX_RECV_BATCH_MAX];
    if (max > CLINUX_RECV_BATCH_MAX) max = CLINUX_RECV_BATCH_MAX;
    memset(msgs, 0, sizeof(msgs[0]) * (size_t)max);
    for (int i = 0; i < max; i++) {
        iov[i].iov_base = buffer + (size_t)i * (size_t)slot;
        iov[i].iov_len = (size_t)slot;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        if (arrivals) {
            msgs[i].msg_hdr.msg_control = control[i].bytes;
            msgs[i].msg_hdr.msg_controllen = sizeof(control[i].bytes);
        }
    }
    int n = (int)syscall(SYS_recvmmsg, fd, msgs, (unsigned int)max, MSG_DONTWAIT, (void *)0);
    for (int i = 0; i < n; i++) {
        lengths[i] = (int)msgs[i].msg_len;
        if (!arrivals) continue;
        arrivals[i] = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec t;
                memcpy(&t, CMSG_DATA(c), sizeof(t));
                arrivals[i] = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
            }
        }
    }
    return n;
}

#include <errno.h>
#include <spawn.h>

/// glibc 2.34+ (Debian 12, Raspberry Pi OS 12); declared only under _GNU_SOURCE, and weak so
/// that an older libc still links (the call then reports ENOSYS).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int) __attribute__((weak));
/// Makes the child close every descriptor from `from` up, whatever the close-on-exec flag:
/// libraries such as swift-nio open sockets without it, and a child that inherits a
/// listening or connected socket keeps it open after this process closes its copy.
static inline int clinux_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    if (posix_spawn_file_actions_addclosefrom_np == 0) return ENOSYS;
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#endif
