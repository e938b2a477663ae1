// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
import Testing
import TestBackend

/// `blegate pair` as a process against the loopback backend.
@Suite("blegate pair", .serialized)
struct PairCommandTests {
    static let address = "A0:9E:1A:12:34:56"

    static func backend(codes: [String]) async throws -> TestBackend {
        let b = try TestBackend(.init(token: RunFixture.token, pairingCodes: codes))
        try await b.start()
        return b
    }

    @Test("A valid code pairs the device: the client id is stored and `blegate devices` shows the member")
    func pairs() async throws {
        let backend = try await Self.backend(codes: ["ABC123"])
        defer { Task { await backend.stop() } }
        let f = try RunFixture()
        try f.writeConfig(backendURL: backend.baseURL)
        let (out, status) = await f.cli("pair --device \(Self.address.lowercased()) --code ABC123")
        #expect(status == 0, "\(out)")
        let pairing = try #require(backend.store.pairings.first)
        #expect(pairing.device["address"]?.string == Self.address)
        #expect(out.contains(pairing.clientID), "\(out)")
        let devices = await f.cli("devices --json")
        #expect(devices.status == 0, "\(devices.out)")
        #expect(devices.out.contains("\"client_id\":\"\(pairing.clientID)\""), "\(devices.out)")
    }

    @Test("The wall's short id (last four hex digits) names a device the registry knows; no match: exit 64")
    func shortID() async throws {
        let backend = try await Self.backend(codes: ["ABC123", "DEF456"])
        defer { Task { await backend.stop() } }
        let f = try RunFixture()
        try f.writeConfig(backendURL: backend.baseURL)
        #expect(await f.cli("pair --device \(Self.address) --code ABC123").status == 0)
        let (out, status) = await f.cli("pair --device 3456 --code DEF456")
        #expect(status == 0, "\(out)")
        #expect(backend.store.pairings.count == 2)
        #expect(backend.store.pairings.allSatisfy { $0.device["address"]?.string == Self.address })
        let miss = await f.cli("pair --device beef --code DEF456")
        #expect(miss.status == 64, "\(miss.out)")
        #expect(miss.out.contains("BEEF"), "\(miss.out)")
        #expect(await f.cli("pair --device 12345 --code DEF456").status == 64)
    }

    @Test("An unknown code: exit 2, says so, stores nothing")
    func unknownCode() async throws {
        let backend = try await Self.backend(codes: ["ABC123"])
        defer { Task { await backend.stop() } }
        let f = try RunFixture()
        try f.writeConfig(backendURL: backend.baseURL)
        let (out, status) = await f.cli("pair --device \(Self.address) --code NOPE99")
        #expect(status == 2, "\(out)")
        #expect(out.contains("NOPE99 is unknown"), "\(out)")
        #expect(backend.store.pairings.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: f.dir + "/cache.sqlite"), "nothing stored")
    }

    @Test("A code used already: exit 3 and the first pairing stays")
    func codeAlreadyUsed() async throws {
        let backend = try await Self.backend(codes: ["ABC123"])
        defer { Task { await backend.stop() } }
        let f = try RunFixture()
        try f.writeConfig(backendURL: backend.baseURL)
        #expect(await f.cli("pair --device \(Self.address) --code ABC123").status == 0)
        let first = try #require(backend.store.pairings.first?.clientID)
        let (out, status) = await f.cli("pair --device A0:9E:1A:00:00:01 --code ABC123")
        #expect(status == 3, "\(out)")
        #expect(out.contains("already used"), "\(out)")
        let devices = await f.cli("devices --json")
        #expect(devices.out.contains(first), "\(devices.out)")
        #expect(!devices.out.contains("A0:9E:1A:00:00:01"), "\(devices.out)")
    }

    @Test("Backend down: exit 1 with 'unreachable' and the URL")
    func backendDown() async throws {
        let backend = try await Self.backend(codes: ["ABC123"])
        let url = backend.baseURL
        await backend.stop()
        let f = try RunFixture()
        try f.writeConfig(backendURL: url)
        let (out, status) = await f.cli("pair --device \(Self.address) --code ABC123")
        #expect(status == 1, "\(out)")
        #expect(out.contains("unreachable") && out.contains(url), "\(out)")
    }

    @Test("A refused token: exit 78 naming the token file")
    func tokenRefused() async throws {
        let backend = try await Self.backend(codes: ["ABC123"])
        defer { Task { await backend.stop() } }
        backend.store.token = "another-token"
        let f = try RunFixture()
        try f.writeConfig(backendURL: backend.baseURL)
        let (out, status) = await f.cli("pair --device \(Self.address) --code ABC123")
        #expect(status == 78, "\(out)")
        #expect(out.contains("refused the token") && out.contains(f.tokenPath), "\(out)")
        #expect(backend.store.pairings.isEmpty)
    }

    @Test("No backend configured, or a device that is not an address: refused before any request")
    func refusedLocally() async throws {
        let f = try RunFixture()
        try f.writeConfig(backendURL: nil)
        let (out, status) = await f.cli("pair --device \(Self.address) --code ABC123")
        #expect(status == 78, "\(out)")
        #expect(out.contains("backend.url"), "\(out)")
        let (bad, badStatus) = await f.cli("pair --device 'Polar H10' --code ABC123")
        #expect(badStatus == 64, "\(bad)")
        #expect(bad.contains("--device must be a Bluetooth address"), "\(bad)")
    }
}
