// SPDX-License-Identifier: MIT
import Foundation
import Sync
import TestBackend
import Testing

/// `blegate-test-backend` as a separate process, the way an end-to-end run uses it.
@Suite("blegate-test-backend process")
struct TestBackendProcessTests {
    /// Starts the executable next to the test bundle; returns it and its base URL.
    private func launch(_ arguments: [String]) throws -> (Process, String) {
        let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("blegate-test-backend")
        guard FileManager.default.isExecutableFile(atPath: bin.path) else {
            throw ProcessFailure(description: "\(bin.path) is missing: build it first (swift build --build-tests builds it)")
        }
        let process = Process()
        process.executableURL = bin
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        // The first line is "listening on http://127.0.0.1:PORT".
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening on ") else {
            process.terminate()
            throw ProcessFailure(description: "unexpected first line: \(text)")
        }
        return (process, String(text.dropFirst("listening on ".count)))
    }

    struct ProcessFailure: Error, CustomStringConvertible {
        var description: String
    }

    @Test("--data persists what was accepted; a restarted backend still de-duplicates")
    func dataFileSurvivesRestart() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let data = dir.path + "/backend.jsonl"
        let records = SyntheticRecords.heartRate(count: 25)

        let (first, url) = try launch(["--port", "0", "--token", "tok", "--codes", "ABC123, DEF456", "--data", data])
        let client = try BackendClient(baseURL: url, token: TokenStore(token: "tok"))
        let r1 = try await client.postMetrics(gatewayID: "gym-1", records: records)
        #expect(r1.inserted == 25)
        let clientID = try await client.pair(code: "DEF456", device: PairingDevice(address: "A0:9E:1A:00:00:01"))
        try await client.shutdown()
        first.terminate()
        first.waitUntilExit()

        let lines = try String(contentsOfFile: data, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 26)
        #expect(lines.filter { $0.contains("\"kind\":\"record\"") }.count == 25)

        let (second, url2) = try launch(["--port", "0", "--token", "tok", "--codes", "DEF456", "--data", data])
        let client2 = try BackendClient(baseURL: url2, token: TokenStore(token: "tok"))
        let r2 = try await client2.postMetrics(gatewayID: "gym-1", records: records)
        #expect(r2.inserted == 0)
        #expect(r2.duplicates == 25)
        let again = await #expect(throws: BackendError.self) {
            _ = try await client2.pair(code: "DEF456", device: PairingDevice(address: "A0:9E:1A:00:00:02"))
        }
        #expect(again?.kind == .codeAlreadyUsed)
        #expect(!clientID.isEmpty)
        try await client2.shutdown()
        second.terminate()
        second.waitUntilExit()
        #expect(second.terminationStatus == 0)
    }
}
