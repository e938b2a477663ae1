// SPDX-License-Identifier: MIT
import BackendContract
import Foundation
import Outbox
import Sync
import TestBackend
import Testing
import WearMetrics

@Suite("Metrics request body")
struct MetricsRequestTests {
    @Test("each record's JSON (its own writer's text) goes into the batch byte for byte, after its id and client_id")
    func recordJSONSpliced() throws {
        let records = SyntheticRecords.heartRate(count: 2)
        var unpaired = records[1]
        unpaired.clientID = nil
        let bare = OutboxRecord(id: "00000000-0000-4000-8000-0000000000ff", clientID: nil, sequence: 9,
                                record: WearMetrics(timestamp: UTCTimestamp(millisecondsSince1970: 0), deviceID: "", source: ""))
        let body = MetricsRequest.body(gatewayID: "gym \"1\"", records: [records[0], unpaired, bare])
        let first = records[0].record.jsonString().dropFirst(), second = records[1].record.jsonString().dropFirst()
        #expect(body == "{\"gateway_id\":\"gym \\\"1\\\"\",\"records\":["
            + "{\"id\":\"\(records[0].id)\",\"client_id\":\"member-0\",\(first),"
            + "{\"id\":\"\(records[1].id)\",\"client_id\":null,\(second),"
            + "{\"id\":\"00000000-0000-4000-8000-0000000000ff\",\"client_id\":null,"
            + "\"timestamp\":\"1970-01-01T00:00:00.000Z\",\"device_id\":\"\",\"source\":\"\",\"metrics\":{},\"meta\":{}}]}")
        // The body parses, and each record reads back as the record that was stored.
        let parsed = try ContractValue.parse(body)
        guard case let .array(items)? = parsed["records"] else {
            Issue.record("no records array in \(body)")
            return
        }
        #expect(items.count == 3)
        guard case var .object(members) = items[0] else {
            Issue.record("record 0 is not an object in \(body)")
            return
        }
        #expect(members["id"]?.string == records[0].id && members["client_id"]?.string == "member-0")
        members["id"] = nil
        members["client_id"] = nil
        // A JSON object has no key order, so metrics and meta are compared by key.
        let back = try JSONDecoder().decode(WearMetrics.self, from: Data(ContractValue.object(members).text.utf8))
        let sent = records[0].record
        #expect(back.timestamp == sent.timestamp && back.deviceID == sent.deviceID && back.source == sent.source)
        #expect(back.rrIntervals == sent.rrIntervals)
        #expect(back.metrics.keys.sorted() == sent.metrics.keys.sorted() && sent.metrics.keys.allSatisfy { back.metrics[$0] == sent.metrics[$0] })
        #expect(back.meta.keys.sorted() == sent.meta.keys.sorted() && sent.meta.keys.allSatisfy { back.meta[$0] == sent.meta[$0] })
    }
}
