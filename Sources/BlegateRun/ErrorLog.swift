// SPDX-License-Identifier: MIT
import Synchronization
import Sync
import WearMetrics

/// One entry of `blegate status`'s "last errors".
public struct ErrorEntry: Sendable, Codable, Equatable {
    /// ISO 8601 UTC.
    public var at: String
    /// bluetooth, dbus, backend, storage or config.
    public var category: String
    public var message: String
    /// What the message does not say: the BlueZ error name, the HTTP status, a file.
    public var detail: String?

    public init(at: UTCTimestamp, category: ErrorCategory, message: String, detail: String? = nil) {
        self.at = at.iso8601
        self.category = category.rawValue
        self.message = message
        self.detail = detail
    }
}

/// The gateway's own recent errors (Bluetooth, D-Bus, storage); the sync engine keeps
/// its backend errors itself and the status merges both. Bounded: a strap that fails
/// all night must not grow memory.
public final class ErrorLog: Sendable {
    public static let capacity = 10
    private let entries = Mutex<[ErrorEntry]>([])

    public init() {}

    public func add(_ category: ErrorCategory, _ message: String, detail: String? = nil) {
        let entry = ErrorEntry(at: .now, category: category, message: message, detail: detail)
        entries.withLock { list in
            list.append(entry)
            if list.count > Self.capacity { list.removeFirst(list.count - Self.capacity) }
        }
    }

    public var all: [ErrorEntry] { entries.withLock { $0 } }

    /// Puts the errors a previous run saved before this run's own: after a crash and a
    /// restart, `blegate status` still shows what went wrong before it.
    public func restore(_ earlier: [ErrorEntry]) {
        entries.withLock { list in
            list = Array((earlier + list).suffix(Self.capacity))
        }
    }

    /// This log and the sync engine's errors, oldest first, the last `capacity` of them.
    static func merged(_ own: [ErrorEntry], sync: [SyncErrorEntry]) -> [ErrorEntry] {
        let fromSync = sync.map { e in
            ErrorEntry(at: e.at, category: e.category, message: e.message, detail: e.httpStatus.map { "HTTP \($0)" })
        }
        // ISO 8601 UTC strings of one format sort as the instants they name.
        let all = (own + fromSync).enumerated().sorted { a, b in
            a.element.at == b.element.at ? a.offset < b.offset : a.element.at < b.element.at
        }.map(\.element)
        return Array(all.suffix(capacity))
    }
}
