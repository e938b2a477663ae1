// SPDX-License-Identifier: MIT

import Effort
import Foundation
import Testing
import WearMetrics
@testable import Workouts

/// The FIT and TCX files of a workout, checked by outside tools: Garmin's FIT SDK for
/// Python (scripts/check_fit.py) and xmllint against Garmin's TCX v2 schema. Both are put
/// in place by `BLEGATE_SETUP_TESTS=1 scripts/setup.sh` (under .build).
@Suite struct ExportTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let python = root + "/.build/test-python/bin/python"
    static let checkFIT = root + "/scripts/check_fit.py"
    static let schema = root + "/.build/test-schemas/TrainingCenterDatabasev2.xsd"

    /// Ten minutes of a ramping heart rate (1 Hz, a 20 s dropout at 5 min) on a
    /// treadmill, for a member whose calories are known.
    static func workout(type: WorkoutType = .run) throws -> Workout {
        var records: [WearMetrics] = []
        for s in 0...600 where !(300..<320).contains(s) {
            records.append(strapRecord(Double(s), hr: 95 + Double(s) / 8 + Double(s % 7)))
            if s % 5 == 0 { records.append(machineRecord(Double(s) + 0.5, distance: 400 + 2.75 * Double(s))) }
        }
        let profile = MemberProfile(age: 35, weightKg: 70, sex: .female)
        return try #require(WorkoutBuilder.build(request(profile: profile, type: type), records: records))
    }

    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-workouts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func run(_ arguments: [String]) throws -> (out: String, status: Int32) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: arguments[0])
        p.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), p.terminationStatus)
    }

    static func requireTools() throws {
        try #require(FileManager.default.isExecutableFile(atPath: python),
                     "no \(python): run BLEGATE_SETUP_TESTS=1 scripts/setup.sh")
        try #require(FileManager.default.fileExists(atPath: schema), "no \(schema): run BLEGATE_SETUP_TESTS=1 scripts/setup.sh")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/xmllint"), "no xmllint: run BLEGATE_SETUP_TESTS=1 scripts/setup.sh")
    }

    func fitCheck(_ w: Workout, file: URL) throws -> [String] {
        [
            Self.python, Self.checkFIT, file.path,
            "--avg-hr", String(Int(w.avgHeartRate.rounded())), "--max-hr", String(w.maxHeartRate),
            "--elapsed", String(w.durationSeconds), "--records", String(w.samples.count),
            "--calories", String(Int(try #require(w.caloriesActive).rounded())),
            "--distance", String(try #require(w.distanceMeters)),
            "--zones", w.secondsInZone.map(String.init).joined(separator: ","),
            // Tanaka at 35: 183.5 → 184; 50 % is 92 bpm (zone 1), 60 % 110.4 → 111, 70 %
            // 128.8 → 129, 80 % 147.2 → 148, 90 % 165.6 → 166: each zone ends one below.
            "--zone-bounds", "91,110,128,147,165,184",
        ]
    }

    @Test func fitFilePassesGarminsSDK() throws {
        try Self.requireTools()
        let w = try Self.workout()
        #expect(w.durationSeconds == 600)
        #expect(w.samples.count == 581)
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("workout.fit")
        try Data(FITWriter.encode(w)).write(to: file)
        let (out, status) = try Self.run(try fitCheck(w, file: file))
        #expect(status == 0, "\(out)")
        #expect(out.contains("\"sport\": \"running\""), "\(out)")
    }

    @Test func everyWorkoutTypeMakesAValidFIT() throws {
        try Self.requireTools()
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sports: [WorkoutType: String] = [.run: "running", .walk: "walking", .cycle: "cycling", .strength: "training", .hiit: "hiit", .other: "generic"]
        for type in WorkoutType.allCases {
            let w = try Self.workout(type: type)
            let file = dir.appendingPathComponent("\(type.rawValue).fit")
            try Data(FITWriter.encode(w)).write(to: file)
            let (out, status) = try Self.run([Self.python, Self.checkFIT, file.path, "--records", String(w.samples.count)])
            #expect(status == 0, "\(type): \(out)")
            #expect(out.contains("\"sport\": \"\(try #require(sports[type]))\""), "\(type): \(out)")
        }
    }

    @Test func aCorruptedFITFailsTheCheck() throws {
        try Self.requireTools()
        var bytes = FITWriter.encode(try Self.workout())
        bytes[bytes.count / 2] ^= 0x5A
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("corrupt.fit")
        try Data(bytes).write(to: file)
        let (out, status) = try Self.run([Self.python, Self.checkFIT, file.path])
        #expect(status != 0, "\(out)")
        #expect(out.contains("integrity check failed"), "\(out)")
    }

    @Test func tcxFileMatchesGarminsSchema() throws {
        try Self.requireTools()
        let w = try Self.workout()
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("workout.tcx")
        let text = TCXWriter.document(w)
        try text.write(to: file, atomically: true, encoding: .utf8)
        let (out, status) = try Self.run(["/usr/bin/xmllint", "--noout", "--schema", Self.schema, file.path])
        #expect(status == 0, "\(out)")
        #expect(text.components(separatedBy: "<Trackpoint>").count - 1 == w.samples.count)
        #expect(text.contains("<TotalTimeSeconds>600</TotalTimeSeconds>"))
        #expect(text.contains("<AverageHeartRateBpm><Value>\(Int(w.avgHeartRate.rounded()))</Value></AverageHeartRateBpm>"))
        #expect(text.contains("<Notes>Spin 10:00</Notes>"))

        // The schema check can fail: a lap without its required Intensity is rejected.
        let broken = dir.appendingPathComponent("broken.tcx")
        try text.replacingOccurrences(of: "<Intensity>Active</Intensity>", with: "").write(to: broken, atomically: true, encoding: .utf8)
        #expect(try Self.run(["/usr/bin/xmllint", "--noout", "--schema", Self.schema, broken.path]).status != 0)
    }
}

@Suite struct FITEncodingTests {
    /// The CRC-16/ARC check value of "123456789" (the catalogue's check for this
    /// polynomial, initial value and reflection).
    @Test func crcCheckValue() {
        #expect(FITEncoder.crc16(Array("123456789".utf8)) == 0xBB3D)
    }

    @Test func headerAndTrailer() throws {
        let bytes = FITWriter.encode(try ExportTests.workout())
        #expect(bytes[0] == 14)
        #expect(bytes[1] == 0x20)
        #expect(Array(bytes[8..<12]) == Array(".FIT".utf8))
        let dataSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        #expect(bytes.count == 14 + dataSize + 2)
        #expect(FITEncoder.crc16(bytes[0..<12]) == UInt16(bytes[12]) | UInt16(bytes[13]) << 8)
        // A CRC run over the data and its own trailer ends at 0.
        #expect(FITEncoder.crc16(bytes) == 0)
    }

    @Test func zoneBoundsAgreeWithTheZones() {
        // Max 185: 92 bpm is below zone 1, 93 in it (as WorkoutBuilderTests finds).
        #expect(FITWriter.zoneHighBounds(max: 185, resting: nil) == [92, 110, 129, 147, 166, 185])
        // Karvonen, max 180, rest 70: 70 + s × 110 = 125, 136, 147, 158, 169 are each a zone's first bpm.
        #expect(FITWriter.zoneHighBounds(max: 180, resting: 70) == [124, 135, 146, 157, 168, 180])
    }

    @Test func timestampsCountFromFITsEpoch() {
        // 1989-12-31T00:00:00Z is FIT's 0; the fixtures' class start 2026-11-25T10:00:00Z.
        #expect(FITWriter.timestamp(UTCTimestamp(millisecondsSince1970: 631_065_600_000)) == 0)
        #expect(FITWriter.timestamp(at(0.999)) == UInt32(1_795_600_800 - 631_065_600))
    }
}
