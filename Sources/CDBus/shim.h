#ifndef BLEGATE_CDBUS_SHIM_H
#define BLEGATE_CDBUS_SHIM_H

// libdbus spells its type codes as macros such as ((int) 's'), which Swift cannot
// import, and a few of its entry points are variadic. This header turns the former
// into constants and wraps the latter, so that the Swift D-Bus layer needs no C of its own.

#include <dbus/dbus.h>

static const int CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CDBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int CDBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int CDBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int CDBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int CDBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int CDBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int CDBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;

static const int CDBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int CDBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int CDBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR;
static const int CDBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;

static const unsigned int CDBUS_WATCH_READABLE = DBUS_WATCH_READABLE;
static const unsigned int CDBUS_WATCH_WRITABLE = DBUS_WATCH_WRITABLE;
static const unsigned int CDBUS_WATCH_ERROR = DBUS_WATCH_ERROR;
static const unsigned int CDBUS_WATCH_HANGUP = DBUS_WATCH_HANGUP;

static const int CDBUS_MAXIMUM_ARRAY_LENGTH = DBUS_MAXIMUM_ARRAY_LENGTH;

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

/// The dispatcher's wake-up descriptor (Glibc's Swift module does not export eventfd).
static inline int cdbus_wake_fd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

#include <sys/epoll.h>

/// epoll for AcquireNotify sockets. `struct epoll_event` is packed on x86-64, so Swift
/// never touches it: these wrappers carry a 64-bit key and the event bits separately.
static inline int cdbus_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
static inline int cdbus_epoll_add(int ep, int fd, unsigned long long key) {
    struct epoll_event ev;
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = key;
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}
static inline int cdbus_epoll_del(int ep, int fd) {
    struct epoll_event ev = {0};
    return epoll_ctl(ep, EPOLL_CTL_DEL, fd, &ev);
}
static const unsigned int CDBUS_EPOLL_HANGUP = EPOLLHUP | EPOLLRDHUP | EPOLLERR;
/// Waits for up to `max` ready descriptors; fills `keys` and `events` side by side.
static inline int cdbus_epoll_wait(int ep, unsigned long long *keys, unsigned int *events, int max, int timeout_ms) {
    struct epoll_event evs[64];
    if (max > 64) max = 64;
    int n = epoll_wait(ep, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) { keys[i] = evs[i].data.u64; events[i] = evs[i].events; }
    return n;
}

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/// recvmmsg(2)'s `struct mmsghdr`, which glibc declares only under _GNU_SOURCE.
struct cdbus_mmsghdr { struct msghdr msg_hdr; unsigned int msg_len; };
enum { CDBUS_RECV_BATCH_MAX = 32 };
/// Up to `max` (at most 32) datagrams from `fd` in one system call, without blocking:
/// datagram i lands at `buffer + i * slot` and its length in `lengths[i]`. Returns how
/// many were read, or -1 with errno (EAGAIN: none queued). At end of stream the kernel
/// reports zero-length datagrams.
static inline int cdbus_recv_batch(int fd, unsigned char *buffer, int slot, int max, int *lengths) {
    struct cdbus_mmsghdr msgs[CDBUS_RECV_BATCH_MAX];
    struct iovec iov[CDBUS_RECV_BATCH_MAX];
    if (max > CDBUS_RECV_BATCH_MAX) max = CDBUS_RECV_BATCH_MAX;
    memset(msgs, 0, sizeof(msgs[0]) * (size_t)max);
    for (int i = 0; i < max; i++) {
        iov[i].iov_base = buffer + (size_t)i * (size_t)slot;
        iov[i].iov_len = (size_t)slot;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int n = (int)syscall(SYS_recvmmsg, fd, msgs, (unsigned int)max, MSG_DONTWAIT, (void *)0);
    for (int i = 0; i < n; i++) lengths[i] = (int)msgs[i].msg_len;
    return n;
}

static inline void cdbus_take_error(DBusError *err, char **error_name, char **error_message) {
    *error_name = strdup(err->name ? err->name : DBUS_ERROR_FAILED);
    *error_message = strdup(err->message ? err->message : "");
    dbus_error_free(err);
}

/// `DBusError` is a struct with bit-fields; keeping it on the C side spares Swift
/// its layout. Returns NULL and fills the two out-strings (free them with `free`)
/// when opening fails.
static inline DBusConnection *cdbus_open_private(const char *address, char **error_name, char **error_message) {
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_connection_open_private(address, &err);
    if (c == NULL) cdbus_take_error(&err, error_name, error_message);
    return c;
}

/// `dbus_bus_register` (the Hello call) with its error flattened as above. Returns 1 on success.
static inline int cdbus_bus_register(DBusConnection *connection, char **error_name, char **error_message) {
    DBusError err;
    dbus_error_init(&err);
    if (dbus_bus_register(connection, &err)) return 1;
    cdbus_take_error(&err, error_name, error_message);
    return 0;
}

/// Wraps the variadic `dbus_message_get_args` for bodies of three strings
/// (NameOwnerChanged). Returns 1 on success; the strings belong to the message.
static inline int cdbus_message_get_three_strings(DBusMessage *message, const char **a, const char **b, const char **c) {
    DBusError err;
    dbus_error_init(&err);
    if (dbus_message_get_args(message, &err, DBUS_TYPE_STRING, a, DBUS_TYPE_STRING, b, DBUS_TYPE_STRING, c, DBUS_TYPE_INVALID)) return 1;
    dbus_error_free(&err);
    return 0;
}

/// Wraps the variadic `dbus_message_append_args` for a single string argument.
static inline int cdbus_message_append_string(DBusMessage *message, const char *value) {
    return dbus_message_append_args(message, DBUS_TYPE_STRING, &value, DBUS_TYPE_INVALID);
}

#include <errno.h>
#include <spawn.h>

/// glibc 2.34+ (Debian 12, Raspberry Pi OS 12); declared only under _GNU_SOURCE, and weak so
/// that an older libc still links (the call then reports ENOSYS).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int) __attribute__((weak));
/// Makes the child close every descriptor from `from` up, whatever the close-on-exec flag:
/// libraries such as swift-nio open sockets without it, and a child that inherits a
/// listening or connected socket keeps it open after this process closes its copy.
static inline int cdbus_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    if (posix_spawn_file_actions_addclosefrom_np == 0) return ENOSYS;
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#endif
