// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Cache
import Foundation
import GATT
import BlegateRun
import Normalization
import Outbox
import Sync
import TestBackend
import Testing
import WearMetrics

@Suite("Scale readings → profile metrics → backend")
struct ProfileMetricTests {
    static let scale = "C4:7C:8D:6A:11:02"
    static let at = UTCTimestamp(millisecondsSince1970: 1_795_600_680_000)

    /// An imperial Weight Measurement (flags 0x09): 181.28 lb, BMI 23.9, 74.4 in; and an imperial
    /// Body Composition Measurement (flags 0x0C01): 20.0 % body fat, 181.28 lb, 74.4 in.
    static func imperialReadings() throws -> [WearMetrics] {
        var n = WearMetricsNormalizer()
        let wss = try GATTDecoder.decode(.weightMeasurement, bytes: [0x09, 0xD0, 0x46, 0xEF, 0x00, 0xE8, 0x02])
        let bcs = try GATTDecoder.decode(.bodyCompositionMeasurement, bytes: [0x01, 0x0C, 0xC8, 0x00, 0xD0, 0x46, 0xE8, 0x02])
        let weight = n.normalize(wss, deviceID: scale, at: at)
        let composition = n.normalize(bcs, deviceID: scale, at: at)
        return [try #require(weight), try #require(composition)]
    }

    @Test("mapping: one document per quantity, v5 ids of <record id>/<metric>, keys sorted, rounded to the scale's resolution")
    func mapping() throws {
        let record = try Self.imperialReadings()[0]
        let docs = ProfileMetricMapping.documents(recordID: "0b7c2c1e-4f0a-4d2b-9a51-3e8f6c1d2a90", clientID: "member-7", record: record)
        #expect(docs.map(\.metric) == ["height", "weight"])
        #expect(docs.map(\.value) == [189.0, 82.227])
        #expect(docs[1].id == NameBasedUUID.v5(namespace: NameBasedUUID.sampleNamespace, name: "0b7c2c1e-4f0a-4d2b-9a51-3e8f6c1d2a90/weight"))
        #expect(docs[1].json == #"{"client_id":"member-7","device_id":"C4:7C:8D:6A:11:02","id":"\#(docs[1].id)","measured_at":"2026-11-25T09:58:00.000Z","metric":"weight","source":"blegate","unit":"kg","value":82.227}"#)
        #expect(ProfileMetricMapping.documents(recordID: "x", clientID: nil, record: record).isEmpty)
        var hr = record
        hr.source = "ble_hrm"
        #expect(!ProfileMetricMapping.mayCarryProfileMetric(hr))
    }

    @Test("recovery on start: a committed scale record without its documents gets them; stored ones stay as they are; heart rates and old readings are not read")
    func recovery() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-recover-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = try RecordCache(path: dir + "/cache.sqlite", options: CacheOptions(groupCommitInterval: .milliseconds(20)))
        _ = try await cache.pair(address: Self.scale, clientID: "member-7")
        _ = try await cache.pair(address: "A0:9E:1A:00:00:01", clientID: "member-8")
        let weight = try Self.imperialReadings()[0]
        // A reading older than the window, heart rates of a paired strap, and the reading
        // the gateway died on: committed, no documents (the cache alone, no feeder).
        var old = weight
        old.timestamp = UTCTimestamp(millisecondsSince1970: Self.at.millisecondsSince1970 - ProfileMetricFeeder.recoveryWindow - 1)
        _ = cache.append(old)
        for i in 0..<50 {
            _ = cache.append(WearMetrics(timestamp: UTCTimestamp(millisecondsSince1970: Self.at.millisecondsSince1970 - Int64(i) * 1000),
                                         deviceID: "A0:9E:1A:00:00:01", source: "ble_hrm", metrics: KeyValueList([("hr", 120)])))
        }
        _ = cache.append(weight)
        try await cache.flush()
        #expect(try await cache.documents(kind: .profileMetric).isEmpty)

        let found = try await cache.memberRecords(withinLast: ProfileMetricFeeder.recoveryWindow, sources: ["ble_wss"])
        #expect(found.map(\.record.timestamp) == [Self.at], "only the reading within the window, no heart rate")

        let feeder = ProfileMetricFeeder(cache: cache)
        #expect(await feeder.recover() == 2)
        let stored = try await cache.documents(kind: .profileMetric)
        #expect(stored.count == 2 && stored.allSatisfy { $0.revision == 1 && $0.state == .pending })
        let weights = try await cache.latestWeights()
        #expect(weights["member-7"]?.value == 82.227)
        // A second start finds them stored: same text, no new revision.
        #expect(await feeder.recover() == 2)
        #expect(try await cache.documents(kind: .profileMetric) == stored)
        try await cache.close()
    }

    @Test("an imperial scale of a paired member: the record sink stores kg and cm profile metrics, the engine delivers them once")
    func sinkToBackend() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-profile-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = try RecordCache(path: dir + "/cache.sqlite", options: CacheOptions(groupCommitInterval: .milliseconds(20)))
        _ = try await cache.pair(address: Self.scale, clientID: "member-7")
        let sink = CacheRecordSink(cache: cache, facts: DeviceFacts())
        for r in try Self.imperialReadings() { sink.receive(r, kind: .measurement) }
        // Unpaired scale: its reading stays a record only.
        var stranger = try Self.imperialReadings()[0]
        stranger.deviceID = "C4:7C:8D:6A:11:99"
        sink.receive(stranger, kind: .measurement)
        try await cache.flush()

        _ = try await eventually(timeout: 30, every: .milliseconds(20)) { try await cache.documents(kind: .profileMetric).count >= 5 }
        let stored = try await cache.documents(kind: .profileMetric)
        #expect(stored.count == 5)   // height + weight from WSS; body fat + weight + height from BCS
        let weights = try await cache.latestWeights()
        #expect(weights.keys.sorted() == ["member-7"])
        #expect(weights["member-7"]?.value == 82.227)

        let backend = try TestBackend(.init(token: "t"))
        try await backend.start()
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: "t"))
        let engine = SyncEngine(outbox: cache, documents: cache, client: client,
                                configuration: SyncConfiguration(gatewayID: "gym-test-1", interval: .milliseconds(100)))
        let run = Task { try await engine.run() }
        #expect(await backend.wait(timeout: .seconds(30)) { $0.profileMetrics.count == 5 })
        let received = backend.store.profileMetrics.map(\.json)
        #expect(Set(received.compactMap { $0["client_id"]?.string }) == ["member-7"])
        let byMetric = Dictionary(grouping: received) { $0["metric"]?.string ?? "" }
        #expect(byMetric["weight"]?.allSatisfy { $0["value"]?.number == 82.227 && $0["unit"]?.string == "kg" } == true)
        #expect(byMetric["height"]?.allSatisfy { $0["value"]?.number == 189.0 && $0["unit"]?.string == "cm" } == true)
        #expect(byMetric["body_fat"]?.first?["value"]?.number == 20)
        #expect(byMetric["body_fat"]?.first?["unit"]?.string == "percent")
        #expect(backend.store.records.count == 3)

        await engine.stop()
        _ = try? await run.value
        try? await client.shutdown()
        await backend.stop()
        try await cache.close()
    }
}
