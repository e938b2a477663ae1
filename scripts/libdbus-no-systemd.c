// SPDX-License-Identifier: MIT
// Linked only into release builds that take libdbus-1 from its static archive
// (scripts/build-release.sh). libdbus calls these two libsystemd functions in one place:
// a D-Bus *server* listening on a "systemd:" address (socket activation of a bus daemon).
// blegate is a client and never listens there, so instead of linking libsystemd (and with
// it libgcrypt, liblz4, libzstd, liblzma and libcap, 0.8 MiB resident in `blegate run`),
// they answer as a libsystemd built without that support would: not supported.
#include <errno.h>

int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return -ENOSYS;
}

int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd; (void)family; (void)type; (void)listening;
    return -ENOSYS;
}
