// SPDX-License-Identifier: MIT
import BlegateServer
import TestBackend
import Testing
import BackendContract

/// Both backends judge what a gateway sends with the one implementation of the contract's
/// checks (`Outbox.ContractValidation`): the same table of bad items is rejected by each
/// with the same reasons, and the good ones are stored.
@Suite("the contract's checks at both backends")
struct ContractValidationTests {
    enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case testBackend = "the loopback test backend"
        case server = "blegate-server"
        var testDescription: String { rawValue }
    }

    /// A running backend: where to send, with which token, and how to stop it.
    struct Running: Sendable {
        var url: String
        var token: String?
        var stop: @Sendable () async -> Void

        func send(_ path: String, _ body: String) async throws -> ServerHarness.Answer {
            try await ServerHarness.send(to: url + path, body, token: token)
        }
    }

    static func start(_ backend: Backend) async throws -> Running {
        switch backend {
        case .testBackend:
            let b = try TestBackend(.init())
            try await b.start()
            return Running(url: b.baseURL, token: nil, stop: { await b.stop() })
        case .server:
            let h = try await ServerHarness.start()
            let token = try await h.store.addGateway("gw-a")
            return Running(url: h.baseURL, token: token, stop: { await h.stop() })
        }
    }

    /// Sends the good items then the bad ones in one batch and checks the answer: every good
    /// one inserted, every bad one rejected in order with its reason.
    func check(_ b: Running, _ path: String, key: String, good: [ContractItem], bad: [(ContractItem, String)]) async throws {
        let items = (good + bad.map(\.0)).map(\.text).joined(separator: ",")
        let answer = try await b.send(path, "{\"gateway_id\":\"gw-a\",\"\(key)\":[\(items)]}")
        #expect(answer.status == 200, "\(path): \(answer.body)")
        #expect(answer.json?["inserted"]?.intValue == good.count, "\(path): \(answer.body)")
        #expect(answer.json?["duplicates"]?.intValue == 0, "\(path): \(answer.body)")
        let rejected = answer.json?["rejected"]?.array ?? []
        #expect(rejected.count == bad.count, "\(path): \(answer.body)")
        for (i, (item, reason)) in bad.enumerated() where i < rejected.count {
            #expect(rejected[i]["reason"]?.string == reason, "\(path) \(item.text)")
            #expect(rejected[i]["id"]?.string == item.members.first { $0.key == "id" }.flatMap { try? ContractValue.parse($0.json) }?.string ?? "",
                    "the rejection names the item's id")
        }
    }

    @Test("records, workouts and profile metrics: each bad one rejected with its reason, the good ones stored",
          arguments: Backend.allCases)
    func batches(_ backend: Backend) async throws {
        let b = try await Self.start(backend)
        defer { Task { await b.stop() } }
        try await check(b, "/api/v1/metrics", key: "records", good: ContractExamples.goodRecords, bad: ContractExamples.badRecords)
        try await check(b, "/api/v1/workouts", key: "workouts", good: ContractExamples.goodWorkouts(gateway: "gw-a"),
                        bad: ContractExamples.badWorkouts(gateway: "gw-a"))
        try await check(b, "/api/v1/profile-metrics", key: "metrics", good: ContractExamples.goodProfileMetrics,
                        bad: ContractExamples.badProfileMetrics)
    }

    @Test("samples: a bad one makes the request a 400 that names it and its reason; good ones are stored", arguments: Backend.allCases)
    func samples(_ backend: Backend) async throws {
        let b = try await Self.start(backend)
        defer { Task { await b.stop() } }
        let good = ContractExamples.goodSamples
        let stored = try await b.send("/api/v1/samples", "{\"samples\":[\(good.map(\.text).joined(separator: ","))]}")
        #expect(stored.status == 200 && stored.json?["inserted"]?.intValue == good.count && stored.json?["duplicates"]?.intValue == 0,
                "\(stored.body)")
        for (item, reason) in ContractExamples.badSamples {
            let answer = try await b.send("/api/v1/samples", "{\"samples\":[\(ContractExamples.sample().text),\(item.text)]}")
            #expect(answer.status == 400 && answer.json?["error"]?.string == "samples[1].\(reason)", "\(item.text): \(answer.body)")
        }
    }
}
