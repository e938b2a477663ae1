// SPDX-License-Identifier: MIT
import Foundation
import Testing
import WearMetrics
@testable import Workouts

@Suite struct WorkoutReadingTests {
    @Test func aSentWorkoutReadsBackWithItsTrack() throws {
        let sent = try ExportTests.workout()
        let text = sent.jsonString
        var records: [WearMetrics] = []
        for s in 0...600 where !(300..<320).contains(s) {
            records.append(strapRecord(Double(s), hr: 95 + Double(s) / 8 + Double(s % 7)))
            if s % 5 == 0 { records.append(machineRecord(Double(s) + 0.5, distance: 400 + 2.75 * Double(s))) }
        }
        let read = try Workout(json: text, records: records.reversed(), zoneMaxHR: sent.zoneMaxHR, zoneRestingHR: sent.zoneRestingHR)
        #expect(read == sent)
        #expect(read.jsonString == text)
    }

    @Test func aDamagedWorkoutSaysWhichKey() throws {
        var text = try ExportTests.workout().jsonString
        text = text.replacingOccurrences(of: "\"seconds_in_zone\":[", with: "\"seconds_in_zone\":[1,")
        let error = #expect(throws: WorkoutReadError.self) { try Workout(json: text, records: [], zoneMaxHR: 185, zoneRestingHR: nil) }
        #expect(error?.description.contains("seconds_in_zone") == true)
    }
}
