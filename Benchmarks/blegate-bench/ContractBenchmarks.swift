// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BackendContract
import BlegateServer
import GATT
import Normalization
import Outbox
import Sync
import Timing
import WearMetrics

/// `blegate-bench contract-parse [BATCHES]`: µs per record for what blegate-server does with
/// a 200-record `POST /api/v1/metrics` body before the database, as `blegate run` sends it
/// (`MetricsRequest.body`: id, client_id, timestamp, device_id, source, metrics {hr}, meta
/// {sensor_contact, rr_count, battery, body_sensor_location}, rr_ms [2]): parsing it through
/// `JSONDecoder` alone (the old path) and through `ContractValue.parse` (the fast reader),
/// `ContractValidation.recordProblem` over its records, and the server's whole per-record
/// pass (`ServerStore.columns`: the checks, the ids, the columns). Build with `-c release`.
func runContractParseBenchmarks(_ arguments: [String]) {
    let batches = Int(arguments.first ?? "") ?? 500
    let perBatch = 200
    var meta = DeviceMeta()
    meta.absorb(try! GATTDecoder.decode(.batteryLevel, bytes: [0x52]))
    meta.absorb(try! GATTDecoder.decode(.bodySensorLocation, bytes: [0x01]))
    let records = (0..<perBatch).map { i in
        // HR 60-149 bpm, contact detected, 2 RR values (1/1024 s, so fractional ms).
        let rr = UInt16(61_440 / (60 + i % 90))
        let hrm = try! HeartRateMeasurement(bytes: [0x16, UInt8(60 + i % 90), UInt8(rr & 0xFF), UInt8(rr >> 8),
                                                    UInt8((rr + 3) & 0xFF), UInt8((rr + 3) >> 8)])
        let record = WearMetricsNormalizer.record(heartRate: hrm, deviceID: "A0:9E:1A:10:0A:\(i % 40 < 16 ? "0" : "")\(String(i % 40, radix: 16, uppercase: true))",
                                                  at: UTCTimestamp(millisecondsSince1970: 1_767_323_045_678 + Int64(i) * 25),
                                                  deviceMeta: meta)
        return OutboxRecord(id: UUID().uuidString.lowercased(), clientID: "member-\(i % 40)", sequence: Int64(i + 1), record: record)
    }
    let body = Data(MetricsRequest.body(gatewayID: "gym-1", records: records).utf8)
    let guess = ContractValue.Guess.gatewayRequest
    let decoded = try! ContractValue.decoded(body, guess: guess)
    let parsed = try! ContractValue.parse(body, guess: guess)
    guard decoded == parsed, decoded.text == parsed.text, let items = parsed["records"]?.array, items.count == perBatch,
          ContractJSONReader.value(body) != nil else {
        fatalError("contract-parse: the fast path did not read the batch as JSONDecoder does")
    }
    print("contract-parse: \(batches) × a \(perBatch)-record body of \(body.count) bytes; one record:")
    print(items[0].text)
    let clock = ContinuousClock()
    var checksum = 0
    // Warm-up.
    for _ in 0..<20 {
        checksum &+= ((try? ContractValue.decoded(body, guess: guess))?["records"]?.array?.count ?? 0)
        checksum &+= ((try? ContractValue.parse(body, guess: guess))?["records"]?.array?.count ?? 0)
    }
    let n = batches * perBatch
    let old = clock.measure {
        for _ in 0..<batches { checksum &+= ((try? ContractValue.decoded(body, guess: guess))?["records"]?.array?.count ?? 0) }
    }
    reportMicros("parse, JSONDecoder with the contract's guesses (old path)", old, n)
    let new = clock.measure {
        for _ in 0..<batches { checksum &+= ((try? ContractValue.parse(body, guess: guess))?["records"]?.array?.count ?? 0) }
    }
    reportMicros("parse, ContractJSONReader (ContractValue.parse)", new, n)
    let validation = clock.measure {
        for _ in 0..<(batches * 4) {
            for r in items where ContractValidation.recordProblem(r) != nil { checksum &+= 1 }
        }
    }
    reportMicros("ContractValidation.recordProblem", validation, n * 4)
    let pass = clock.measure {
        for _ in 0..<(batches * 4) { checksum &+= ServerStore.columns(of: items).columns.ids.count }
    }
    reportMicros("ServerStore.columns (checks, ids, columns: store's pass before the database)", pass, n * 4)
    print("checksum \(checksum)")
}

private func reportMicros(_ name: String, _ elapsed: Duration, _ records: Int) {
    let us = elapsed.seconds * 1e6 / Double(records)
    print("\(name): \((us * 100).rounded() / 100) µs/record over \(records) records")
}
