// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Cache
import Foundation
import GATT
import Outbox
import Testing
import WearMetrics

/// The path a person takes: the real `blegate` binary on a real cache file.
@Suite("blegate cache and devices as commands")
struct CacheCommandTests {
    /// `blegate` is built beside the test bundle (`swift build --build-tests` builds every product).
    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("blegate").path
    }

    /// Runs `blegate` with arguments; returns (status, stdout, stderr).
    func blegate(_ args: [String]) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func filledStateDir() async throws -> TempDir {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(unpaired: .hold))
        try await cache.upsertDevice(DeviceUpdate(address: "AA:00:00:00:00:01", name: "Polar H10 1", model: "H10", battery: 0.9))
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
        cache.append((0..<6).map { hrRecord($0 % 2 == 0 ? "AA:00:00:00:00:01" : "AA:00:00:00:00:02", $0) })
        try await cache.flush()
        let batch = try await cache.pendingBatch(limit: 1)
        try await cache.markDelivered(batch.map(\.id))
        try await cache.close()
        return dir
    }

    /// A command's JSON output.
    static func parse(_ out: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(out.utf8))
    }

    @Test("cache stats --json counts what the cache holds")
    func stats() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary), "no blegate binary at \(Self.binary)")
        let dir = try await filledStateDir()
        let (status, out, err) = try blegate(["cache", "stats", "--json", "--state-dir", dir.path])
        #expect(status == 0, "\(err)")
        let json = try #require(try Self.parse(out) as? [String: Any])
        #expect(json["records"] as? Int == 6)
        #expect(json["pending"] as? Int == 5)
        #expect(json["delivered"] as? Int == 1)
        #expect(json["unpaired_pending"] as? Int == 3)
        let (textStatus, text, _) = try blegate(["cache", "stats", "--state-dir", dir.path])
        #expect(textStatus == 0)
        #expect(text.contains("records: 6 total, 5 pending (3 unpaired"), "\(text)")
    }

    @Test("devices lists the member of each device")
    func devices() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary))
        let dir = try await filledStateDir()
        let (status, out, err) = try blegate(["devices", "--json", "--state-dir", dir.path])
        #expect(status == 0, "\(err)")
        let items = try #require(try Self.parse(out) as? [[String: Any]], "not an array: \(out)")
        let paired = items.first { $0["address"] as? String == "AA:00:00:00:00:01" }
        #expect(paired?["client_id"] as? String == "member-1")
        #expect(paired?["name"] as? String == "Polar H10 1")
        #expect(paired?["records"] as? Int == 3)
        let unpaired = items.first { $0["address"] as? String == "AA:00:00:00:00:02" }
        #expect(unpaired?["client_id"] is NSNull)
        let (_, table, _) = try blegate(["devices", "--state-dir", dir.path])
        #expect(table.contains("(unpaired)"))
    }

    @Test("cache export writes a file of JSON lines; prune --dry-run deletes nothing")
    func exportAndPrune() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary))
        let dir = try await filledStateDir()
        let file = dir.path + "/out.jsonl"
        let (status, _, err) = try blegate(["cache", "export", "--since", "2026-01-01T03:31:04Z", "--output", file, "--state-dir", dir.path])
        #expect(status == 0, "\(err)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let (pruneStatus, pruneOut, _) = try blegate(["cache", "prune", "--dry-run", "--state-dir", dir.path])
        #expect(pruneStatus == 0)
        #expect(pruneOut.hasPrefix("would delete 1 records"), "\(pruneOut)")
        let (_, statsOut, _) = try blegate(["cache", "stats", "--json", "--state-dir", dir.path])
        #expect((try Self.parse(statsOut) as? [String: Any])?["records"] as? Int == 6)
    }

    @Test("another process reads the cache while this one keeps writing (WAL)")
    func readsBesideWriter() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary))
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .milliseconds(10), groupCommitRecords: 200))
        cache.append((0..<100).map { hrRecord("AA:00:00:00:00:01", $0) })
        try await cache.flush()
        var counts: [Int] = []
        for round in 1...3 {
            let seq = cache.append((0..<2000).map { hrRecord("AA:00:00:00:00:01", round * 10_000 + $0) })
            let (status, out, err) = try blegate(["cache", "stats", "--json", "--state-dir", dir.path])
            #expect(status == 0, "\(err)")
            if let n = (try Self.parse(out) as? [String: Any])?["records"] as? Int { counts.append(n) }
            try await withTimeout { try await cache.waitUntilCommitted(seq) }
        }
        #expect(counts.count == 3)
        #expect(counts.allSatisfy { $0 >= 100 && $0 <= 6100 })
        #expect(counts == counts.sorted())
        try await cache.close()
    }

    @Test("errors: a bad config exits 78 with the key; a missing cache exits 1 with the path")
    func errors() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary))
        let dir = TempDir()
        let config = dir.path + "/blegate.toml"
        try "[cache]\nretention = \"forever\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (status, _, err) = try blegate(["cache", "stats", "--config", config])
        #expect(status == 78)
        #expect(err.hasPrefix("config error: cache.retention: must be a duration"), "\(err)")
        let (missing, _, missingErr) = try blegate(["devices", "--state-dir", dir.path + "/none"])
        #expect(missing == 1)
        #expect(missingErr.contains("no cache database at \(dir.path)/none/cache.sqlite"), "\(missingErr)")
    }
}
