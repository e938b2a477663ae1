// SPDX-License-Identifier: MIT
import Cache
import Foundation
import Testing
import WearMetrics

/// A temporary directory removed at deinit.
final class TempDir: @unchecked Sendable {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-cache-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var database: String { path + "/cache.sqlite" }
}

let base = UTCTimestamp(millisecondsSince1970: 1_767_238_262_000)   // 2026-01-01T03:31:02Z

/// A heart-rate record like the normalizer makes: `i` seconds after `base`.
func hrRecord(_ device: String, _ i: Int, hr: Double = 70, at: UTCTimestamp? = nil) -> WearMetrics {
    var metrics = KeyValueList<Double>()
    metrics["hr"] = hr + Double(i % 30)
    var meta = KeyValueList<String>()
    meta["sensor_contact"] = "detected"
    meta["rr_count"] = "2"
    return WearMetrics(timestamp: at ?? UTCTimestamp(millisecondsSince1970: base.millisecondsSince1970 + Int64(i) * 1000),
                       deviceID: device, source: "ble_hrm", metrics: metrics, meta: meta, rrIntervals: [812.5, 790.0])
}

/// Collects commit events from the writer thread.
final class CommitLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [CommitEvent] = []

    func add(_ e: CommitEvent) { lock.lock(); storage.append(e); lock.unlock() }
    var events: [CommitEvent] { lock.lock(); defer { lock.unlock() }; return storage }
}
