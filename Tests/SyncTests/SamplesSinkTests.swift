// SPDX-License-Identifier: MIT
import Outbox
import Sync
import TestBackend
import Testing
import WearMetrics

@Suite("Samples sink")
struct SamplesSinkTests {
    static let t = UTCTimestamp(millisecondsSince1970: 1_767_225_600_000)

    static func hrvRecord(id: String) -> OutboxRecord {
        var r = WearMetrics(timestamp: t, deviceID: "A0:9E:1A:12:34:56", source: "ble_hrm")
        r.setMetric("hrv_rmssd", 42.5)
        r.setMetric("hrv_sdnn", 55.25)
        r.meta["hrv_window_s"] = "60"
        r.meta["hrv_sdnn_window_s"] = "300"
        r.meta["manufacturer_name"] = "Polar"
        r.meta["model_number"] = "H10"
        return OutboxRecord(id: id, clientID: "member-7", sequence: 1, record: r)
    }

    @Test("mapping: hr → heartRate count/min at the instant; HRV → ms over its window")
    func mapping() {
        let hr = SyntheticRecords.heartRate(count: 1)[0]
        let s = SampleMapping.samples(for: hr)
        #expect(s.count == 1)
        #expect(s[0].dataType == "heartRate")
        #expect(s[0].unit == "count/min")
        #expect(s[0].value == hr.record[metric: "hr"])
        #expect(s[0].startDate == hr.record.timestamp && s[0].endDate == hr.record.timestamp)
        #expect(s[0].clientID == "member-0")
        #expect(s[0].sourceName == "blegate")

        let hrv = SampleMapping.samples(for: Self.hrvRecord(id: "00000000-0000-4000-8000-0000000000aa"))
        #expect(hrv.map(\.dataType) == ["heartRateVariabilityRMSSD", "heartRateVariabilitySDNN"])
        #expect(hrv.allSatisfy { $0.unit == "ms" && $0.endDate == Self.t && $0.deviceName == "Polar H10" })
        #expect(hrv[0].startDate.millisecondsSince1970 == Self.t.millisecondsSince1970 - 60_000)
        #expect(hrv[1].startDate.millisecondsSince1970 == Self.t.millisecondsSince1970 - 300_000)
        #expect(hrv[1].value == 55.25)
    }

    @Test("short-window SDNN keeps its window; cadence-only records map to nothing")
    func otherKeys() {
        var r = WearMetrics(timestamp: Self.t, deviceID: "d", source: "ble_hrm")
        r.setMetric("hrv_sdnn_120s_ms", 30)
        let s = SampleMapping.samples(for: OutboxRecord(id: "00000000-0000-4000-8000-0000000000ab", clientID: nil, sequence: 1, record: r))
        #expect(s.count == 1)
        #expect(s.first?.startDate.millisecondsSince1970 == Self.t.millisecondsSince1970 - 120_000)
        var c = WearMetrics(timestamp: Self.t, deviceID: "d", source: "ble_csc")
        c.setMetric("cadence_rpm", 80)
        #expect(SampleMapping.samples(for: OutboxRecord(id: "00000000-0000-4000-8000-0000000000ac", clientID: nil, sequence: 2, record: c)).isEmpty)
    }

    @Test("sample uuids are RFC 9562 version-5 UUIDs of record id and type: stable across replays")
    func deterministicUUIDs() {
        // Known vector: uuid5(NAMESPACE_DNS, "python.org").
        #expect(NameBasedUUID.v5(namespace: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", name: "python.org") == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
        let id = "00000000-0000-4000-8000-000000000001"
        #expect(SampleMapping.sampleUUID(recordID: id, dataType: "heartRate") == "3a2f8dd0-59a5-5eb7-a2c5-571c0c57527a")
        #expect(SampleMapping.sampleUUID(recordID: id, dataType: "heartRate") != SampleMapping.sampleUUID(recordID: id, dataType: "heartRateVariabilitySDNN"))
    }

    @Test("the engine posts samples; a replay is all duplicates; unmappable records are skipped")
    func engineSamplesSinkAndReplay() async throws {
        var records = SyntheticRecords.heartRate(count: 120)
        records.append(Self.hrvRecord(id: SyntheticRecords.recordID(500)))
        records[records.count - 1].sequence = 500
        var cadence = WearMetrics(timestamp: Self.t, deviceID: "bike-1", source: "ble_csc")
        cadence.setMetric("cadence_rpm", 85)
        records.append(OutboxRecord(id: SyntheticRecords.recordID(501), clientID: nil, sequence: 501, record: cadence))

        let first = try await Harness.start(records: records, sink: .samples, batchSize: 50)
        #expect(await first.waitForCaughtUp())
        let backend = first.backend
        #expect(backend.store.samples.count == 122)
        #expect(backend.store.requests.allSatisfy { $0.path == "/api/v1/samples" && $0.gzip })
        // Events trail the outbox marks slightly: wait for the last report.
        #expect(await first.log.wait { _ in first.log.reports.reduce(0) { $0 + $1.records } == 122 })
        #expect(first.log.reports.reduce(0) { $0 + $1.skipped } == 1)
        #expect(await first.engine.status.endpoint == backend.baseURL + "/api/v1/samples")
        await first.engine.stop()
        _ = try? await first.run.value
        try await first.client.shutdown()

        let replay = try await Harness.start(records: records, backend: backend, sink: .samples, batchSize: 50)
        #expect(await replay.waitForCaughtUp())
        #expect(backend.store.samples.count == 122)
        #expect(await replay.log.wait { _ in replay.log.reports.reduce(0) { $0 + $1.duplicates } == 122 })
        await replay.finish()
    }
}
