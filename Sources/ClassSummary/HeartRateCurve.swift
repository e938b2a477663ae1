// SPDX-License-Identifier: MIT
import Effort

/// A member's heart rate over a class as a small SVG, each stretch coloured by its zone.
/// Drawn by the gateway and the server, so no page downloads a chart library; the same
/// function draws the wall's, the coach page's and the staff page's curves.
///
/// ```swift
/// let svg = HeartRateCurve(durationSeconds: 2700, maxHR: 186).svg(samples)
/// ```
public struct HeartRateCurve: Sendable {
    /// One heard heart rate: seconds since the class started, beats per minute.
    public struct Sample: Sendable, Equatable {
        public var second: Double
        public var bpm: Double

        public init(second: Double, bpm: Double) {
            self.second = second
            self.bpm = bpm
        }
    }

    /// Zone colours, 0 (below zone 1) to 5: the wall's tile colours, lighter for a line.
    public static let zoneColours = ["#8b949e", "#9fb0c3", "#5aa2ff", "#4cc46a", "#f5a524", "#ff5c5c"]

    /// A gap longer than this between heard heart rates breaks the line (the workouts'
    /// 15 s rule for time in zones).
    public static let gapSeconds = 15.0

    public var durationSeconds: Double
    public var maxHR: Double
    public var restingHR: Double?
    /// The drawing's own units; the SVG scales to its box.
    public var width: Int
    public var height: Int

    public init(durationSeconds: Double, maxHR: Double, restingHR: Double? = nil, width: Int = 300, height: Int = 80) {
        self.durationSeconds = max(1, durationSeconds)
        self.maxHR = maxHR
        self.restingHR = restingHR
        self.width = width
        self.height = height
    }

    /// The SVG element. At most one point per drawing unit (the mean of the samples in it),
    /// so a 90-minute class at 1 Hz is a few hundred points, not 5,400.
    public func svg(_ samples: [Sample]) -> String {
        let buckets = reduce(samples)
        let lo = max(30, min(buckets.map(\.bpm).min() ?? maxHR * 0.5, maxHR * 0.5) - 5)
        let hi = max(buckets.map(\.bpm).max() ?? maxHR, maxHR) + 3
        func x(_ s: Double) -> String { format(s / durationSeconds * Double(width)) }
        func y(_ bpm: Double) -> String { format(Double(height) - (bpm - lo) / (hi - lo) * Double(height)) }

        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(width) \(height)\" preserveAspectRatio=\"none\" role=\"img\""
        out += " aria-label=\"heart rate over the class\">"
        // Faint bands at the zone boundaries, so a flat line still reads as a zone.
        for (i, share) in HeartRateZone.boundaries.enumerated() {
            let bpm = HeartRateZone.target(share: share, max: maxHR, resting: restingHR)
            guard bpm > lo, bpm < hi else { continue }
            out += "<line x1=\"0\" x2=\"\(width)\" y1=\"\(y(bpm))\" y2=\"\(y(bpm))\" stroke=\"\(Self.zoneColours[i + 1])\" stroke-opacity=\".25\" stroke-width=\"1\" vector-effect=\"non-scaling-stroke\"/>"
        }
        // Runs of one zone, each its own polyline; a run ends at a zone change (sharing
        // the point, so the line is unbroken) or at a gap (not sharing it).
        var run: [Sample] = []
        var runZone = -1
        func flush() {
            if run.count == 1 { run.append(Sample(second: run[0].second + 1, bpm: run[0].bpm)) }
            if run.count >= 2 {
                out += "<polyline fill=\"none\" stroke=\"\(Self.zoneColours[runZone])\" stroke-width=\"2\" stroke-linejoin=\"round\""
                out += " vector-effect=\"non-scaling-stroke\" data-zone=\"\(runZone)\" points=\""
                out += run.map { "\(x($0.second)),\(y($0.bpm))" }.joined(separator: " ")
                out += "\"/>"
            }
            run = []
        }
        var previous: Sample?
        for b in buckets {
            let zone = HeartRateZone.zone(hr: b.bpm, max: maxHR, resting: restingHR)
            if let p = previous, b.second - p.second > Self.gapSeconds + bucketSeconds {
                flush()
            } else if zone != runZone, let p = previous {
                flush()
                run = [p]
            }
            runZone = zone
            run.append(b)
            previous = b
        }
        flush()
        return out + "</svg>"
    }

    private var bucketSeconds: Double { durationSeconds / Double(width) }

    /// The mean heart rate of each drawing unit that has samples, in time order.
    func reduce(_ samples: [Sample]) -> [Sample] {
        var sums: [Int: (s: Double, bpm: Double, n: Double)] = [:]
        for sample in samples where sample.bpm > 0 && sample.second >= 0 && sample.second <= durationSeconds {
            let k = min(width - 1, Int(sample.second / bucketSeconds))
            let v = sums[k] ?? (0, 0, 0)
            sums[k] = (v.s + sample.second, v.bpm + sample.bpm, v.n + 1)
        }
        return sums.keys.sorted().map { k in
            let v = sums[k]!
            return Sample(second: v.s / v.n, bpm: v.bpm / v.n)
        }
    }

    private func format(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }
}

/// Times as a summary shows them: minutes and seconds, `12:05`; an hour or more `1:02:05`.
public enum SummaryTime {
    public static func text(seconds: Int) -> String {
        let s = max(0, seconds)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
    }
}
