// SPDX-License-Identifier: MIT
#ifndef BLEGATE_CTIMEX_SHIM_H
#define BLEGATE_CTIMEX_SHIM_H

#include <errno.h>
#include <string.h>
#include <sys/timex.h>

/// Reads the kernel's NTP state without changing anything (modes = 0): returns the
/// clock state (TIME_OK ... TIME_ERROR) and fills the status word, or -errno.
static inline int ctimex_read(int *status) {
    struct timex tx;
    memset(&tx, 0, sizeof tx);
    int state = adjtimex(&tx);
    if (state < 0) return -errno;
    *status = tx.status;
    return state;
}

#endif
