// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import StrapLinks
import LinkPolicy
import Simulator
import Synchronization
import Testing
import WearMetrics

/// What the AcquireNotify reader reads in one round reaches the sink in one hand-off, so
/// the cache's writer and the class keeper take their locks once per round.
@Suite("Reader rounds handed over at once", .serialized)
struct RoundHandOffTests {
    final class Sink: RecordSink {
        struct Seen {
            var single: [SinkRecord] = []
            var batches: [[SinkRecord]] = []
        }
        let seen = Mutex(Seen())
        func receive(_ record: WearMetrics, kind: RecordKind) { seen.withLock { $0.single.append(SinkRecord(record, kind: kind)) } }
        func receive(_ batch: [SinkRecord]) { seen.withLock { $0.batches.append(batch) } }
    }

    @Test("linked straps' heart rate comes in batches of several records, each strap's in arrival order")
    func batchesPerRound() async throws {
        let sink = Sink()
        try await withSimulatedBlueZ({ c in
            c.straps = 6
            c.rate = 4
            c.seed = 12
        }) { bus, _ in
            let connection = try await DBusConnection.connect(bus.busAddress)
            defer { connection.close() }
            var config = LinkConfiguration()
            config.selection = DeviceSelection(mode: .auto)
            config.notifyGather = .milliseconds(200)
            let manager = try StrapManager(connection: connection, configuration: config, sink: sink)
            let run = Task { try await manager.run() }
            try await eventually("six straps streaming", seconds: 60, every: .milliseconds(100)) {
                manager.links.count == 6 && manager.links.allSatisfy { $0.state == .streaming }
            }
            try await eventually("300 records in batches", seconds: 120, every: .milliseconds(100)) {
                sink.seen.withLock { $0.batches.reduce(0) { $0 + $1.count } } >= 300
            }
            run.cancel()
            _ = await run.result
        }

        let seen = sink.seen.withLock { $0 }
        let batched = seen.batches.flatMap { $0 }
        // Linked heart rate never goes one record at a time: only advertised heart rate
        // (heard before a strap linked) and device records do.
        #expect(!seen.single.contains { $0.kind == .heartRate && $0.record.meta["hr_source"] != "advertisement" })
        #expect(batched.allSatisfy { $0.kind == .heartRate || $0.kind == .hrv })
        #expect(Set(batched.map(\.record.deviceID)).count == 6)
        // 24 notifications a second through a 200 ms window: about five a round once dense.
        #expect(Double(batched.count) / Double(seen.batches.count) > 2, "\(batched.count) records in \(seen.batches.count) hand-offs")
        for device in Set(batched.map(\.record.deviceID)) {
            let times = batched.filter { $0.record.deviceID == device && $0.kind == .heartRate }.map(\.record.timestamp.millisecondsSince1970)
            #expect(times == times.sorted(), "\(device): records out of arrival order")
        }
    }
}
