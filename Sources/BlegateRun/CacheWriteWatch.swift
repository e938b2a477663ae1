// SPDX-License-Identifier: MIT
import Cache
import Logging
import Synchronization
import Timing

/// Tells the journal and the error list when the cache cannot write (a full disk), again
/// every minute while it lasts with what is held in memory, dropped and pruned, and when it
/// writes again.
final class CacheWriteWatch: Sendable {
    let cache: RecordCache
    let errors: ErrorLog
    let logger: Logger
    /// Monotonic seconds of the last line while failing; nil while writing works.
    private let reported = Mutex<Double?>(nil)
    static let repeatEvery = 60.0

    init(cache: RecordCache, errors: ErrorLog, logger: Logger) {
        self.cache = cache
        self.errors = errors
        self.logger = logger
    }

    func check() {
        let health = cache.writeHealth
        let now = MonotonicClock.seconds()
        let line: (String, Bool)? = reported.withLock { last in
            guard let summary = health.summary else {
                defer { last = nil }
                return last == nil ? nil : ("cache: writing again, nothing held in memory", false)
            }
            if let l = last, now - l < Self.repeatEvery { return nil }
            let first = last == nil
            last = now
            return ("cache: " + summary, first)
        }
        guard let (message, first) = line else { return }
        if health.failingSince == nil {
            logger.notice("\(message)")
        } else {
            logger.warning("\(message)")
            if first { errors.add(.storage, health.diskFull ? "cache: disk full" : "cache: writes failing", detail: message) }
        }
    }
}
