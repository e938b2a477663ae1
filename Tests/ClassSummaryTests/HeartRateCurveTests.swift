// SPDX-License-Identifier: MIT
import ClassSummary
import Effort
import Testing

@Suite struct HeartRateCurveTests {
    /// Polylines of the drawing, each as (zone, points).
    func lines(_ svg: String) -> [(zone: Int, points: [(Double, Double)])] {
        svg.split(separator: "<polyline").dropFirst().map { part in
            let zone = Int(part.split(separator: "data-zone=\"")[1].prefix { $0 != "\"" })!
            let pts = part.split(separator: "points=\"")[1].prefix { $0 != "\"" }.split(separator: " ").map { p in
                let xy = p.split(separator: ",")
                return (Double(xy[0])!, Double(xy[1])!)
            }
            return (zone, pts)
        }
    }

    @Test func eachStretchTakesItsZoneColour() {
        // max 200: zone 1 from 100 bpm, zone 3 from 140, zone 5 from 180.
        var samples: [HeartRateCurve.Sample] = []
        for s in 0..<100 { samples.append(.init(second: Double(s), bpm: 105)) }
        for s in 100..<200 { samples.append(.init(second: Double(s), bpm: 145)) }
        for s in 200..<300 { samples.append(.init(second: Double(s), bpm: 185)) }
        let svg = HeartRateCurve(durationSeconds: 300, maxHR: 200, width: 300).svg(samples)
        let l = lines(svg)
        #expect(l.map(\.zone) == [1, 3, 5])
        // Unbroken: each run starts where the last ended.
        #expect(l[1].points.first! == l[0].points.last!)
        #expect(l[2].points.first! == l[1].points.last!)
        #expect(svg.contains(HeartRateCurve.zoneColours[5]))
        // Higher heart rate is drawn higher (smaller y).
        #expect(l[2].points.last!.1 < l[0].points.first!.1)
    }

    @Test func aGapBreaksTheLine() {
        let samples = (0..<50).map { HeartRateCurve.Sample(second: Double($0), bpm: 150) }
            + (120..<170).map { HeartRateCurve.Sample(second: Double($0), bpm: 150) }
        let l = lines(HeartRateCurve(durationSeconds: 200, maxHR: 200, width: 200).svg(samples))
        #expect(l.count == 2)
        #expect(l[0].points.last!.0 < 60 && l[1].points.first!.0 > 110)
    }

    @Test func aLongClassIsAtMostOnePointPerUnit() {
        let samples = (0..<5400).map { HeartRateCurve.Sample(second: Double($0), bpm: 120 + Double($0 % 40)) }
        let l = lines(HeartRateCurve(durationSeconds: 5400, maxHR: 190, width: 300).svg(samples))
        #expect(l.reduce(0) { $0 + $1.points.count } <= 300 + l.count)
        #expect(!l.isEmpty)
    }

    @Test func noSamplesDrawsOnlyTheBands() {
        let svg = HeartRateCurve(durationSeconds: 60, maxHR: 180).svg([])
        #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>"))
        #expect(lines(svg).isEmpty)
    }

    @Test func summaryTimesAreMinutesAndSeconds() {
        #expect(SummaryTime.text(seconds: 0) == "0:00")
        #expect(SummaryTime.text(seconds: 65) == "1:05")
        #expect(SummaryTime.text(seconds: 725) == "12:05")
        #expect(SummaryTime.text(seconds: 3725) == "1:02:05")
    }
}
