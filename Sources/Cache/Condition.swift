// SPDX-License-Identifier: MIT
import Glibc

/// A mutex with a condition variable whose timed waits run on `CLOCK_MONOTONIC` (a wall
/// clock step never stretches or cuts a group commit's wait): the writer thread's lock.
final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func signal() { pthread_cond_signal(cond) }
    func broadcast() { pthread_cond_broadcast(cond) }

    /// Waits for a signal; the caller holds the lock.
    func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits for a signal or until `MonotonicClock.nanoseconds()` reaches `deadline`; the
    /// caller holds the lock.
    func wait(untilMonotonicNanoseconds deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(cond, mutex, &ts)
    }
}
