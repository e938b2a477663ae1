// SPDX-License-Identifier: MIT

/// One device's RR stream: beat timing, gap detection, artifact classification and the
/// classified beats of the longest window.
///
/// Classification of a beat waits until `halfWidth` later beats of the same segment have
/// arrived (its centred median window is then complete). Windows computed before that use
/// a provisional classification of the newest beats with the right context they have, so
/// a window over a stream always equals the batch analysis of the same beats.
public struct RRStream: Sendable {
    public let rule: LocalMedianArtifactRule
    /// Beats older than this many seconds before the newest one are dropped.
    public var retention: Double

    /// Raw beats of the current segment that are not classified yet, preceded by up to
    /// `halfWidth` classified ones as left context.
    private var recent: [Double] = []
    private var recentTimes: [Double] = []
    private var pendingStart = 0
    private(set) var classified = BeatQueue()
    private(set) var segment = 0
    private(set) var lastBeatTime: Double?
    private var minimumDrift = Double.infinity
    private var meanRR = 800.0

    public init(rule: LocalMedianArtifactRule = .median20, retention: Double = 300) {
        self.rule = rule
        self.retention = retention
    }

    /// Number of beats received and not yet evicted.
    public var beatCount: Int { classified.count + recent.count - pendingStart }

    /// Starts a new segment: no median window and no successive difference will span it.
    /// Beats still pending are classified with the right context they have.
    public mutating func breakSegment() {
        flushPending()
        recent.removeAll(keepingCapacity: true)
        recentTimes.removeAll(keepingCapacity: true)
        pendingStart = 0
        segment += 1
        lastBeatTime = nil
        minimumDrift = .infinity
    }

    /// Appends the RR values (ms, oldest first) of one notification received at
    /// `receivedAt` (seconds). Returns true when a gap was detected before them.
    @discardableResult
    public mutating func append<C: Collection<Double>>(
        _ rrMilliseconds: C, receivedAt: Double, jitterAllowance: Double = 1.0, driftFactor: Double = 0.7
    ) -> Bool {
        guard !rrMilliseconds.isEmpty else { return false }
        var total = 0.0
        for rr in rrMilliseconds { total += rr }
        total /= 1000
        var gap = false
        if let last = lastBeatTime {
            // Device time (ΣRR) against receipt time: lost notifications make the receipt
            // clock run ahead of the beats by about the lost intervals.
            let drift = receivedAt - (last + total)
            if drift - minimumDrift > jitterAllowance + driftFactor * meanRR / 1000 || drift < -jitterAllowance {
                breakSegment()
                gap = true
            } else {
                minimumDrift = min(minimumDrift, drift)
            }
        }
        // The first notification of a segment is anchored at its receipt time, the newest
        // beat ending then; later beats follow by their RR (device time, no jitter).
        var t = lastBeatTime ?? (receivedAt - total)
        if lastBeatTime == nil { minimumDrift = 0 }
        for rr in rrMilliseconds {
            t += rr / 1000
            appendBeat(rr, time: t)
        }
        lastBeatTime = t
        return gap
    }

    /// Appends one beat at an explicit end time (batch analysis, tests).
    public mutating func appendBeat(_ rr: Double, time: Double) {
        recent.append(rr)
        recentTimes.append(time)
        lastBeatTime = time
        if rule.range.contains(rr) { meanRR += (rr - meanRR) / 16 }
        let h = rule.halfWidth
        while recent.count - 1 - pendingStart >= h {
            classifyPending(at: pendingStart)
            pendingStart += 1
        }
        if pendingStart > h {
            let drop = pendingStart - h
            recent.removeFirst(drop)
            recentTimes.removeFirst(drop)
            pendingStart = h
        }
        classified.removeEnded(atOrBefore: time - retention)
    }

    private mutating func classifyPending(at index: Int) {
        let cls = classify(index)
        classified.append(time: recentTimes[index], rr: recent[index], segment: segment, beatClass: cls)
    }

    private func classify(_ index: Int) -> BeatClass {
        let h = rule.halfWidth
        let lo = max(0, index - h), hi = min(recent.count - 1, index + h)
        return recent.withUnsafeBufferPointer { all in
            rule.classify(UnsafeBufferPointer(rebasing: all[lo...hi]), center: index - lo)
        }
    }

    private mutating func flushPending() {
        while pendingStart < recent.count {
            classifyPending(at: pendingStart)
            pendingStart += 1
        }
    }

    /// HRV over the beats that ended in (`end` − `seconds`, `end`].
    ///
    /// `slack` admits beats stamped up to that much after `end`: the time line of a segment
    /// is anchored at a receipt time, which can be late by one notification period, so a
    /// beat already received may carry a time slightly after the emission time.
    public func window(seconds: Double, endingAt end: Double, quality: HRVQualityRules, slack: Double = 0) -> HRVWindowResult {
        var acc = TimeDomainAccumulator()
        var beats = 0, artifacts = 0
        var rrSum = 0.0
        var previousAccepted = false
        let start = end - seconds

        /// `continues`: the beat before it in the visit is of the same segment.
        func visit(_ rr: Double, _ time: Double, _ continues: Bool, _ cls: BeatClass) -> Bool {
            guard time > start, time <= end + slack else { return false }
            beats += 1
            rrSum += rr
            if cls.isArtifact {
                artifacts += 1
                previousAccepted = false
            } else {
                acc.add(rr, continuesPrevious: previousAccepted && continues)
                previousAccepted = true
            }
            return true
        }

        // `linked`: the next beat is of the same segment as the last one visited.
        var linked = false
        var i = classified.firstIndex(after: start)
        while i < classified.endIndex {
            let b = classified[i]
            if b.time > end + slack { break }
            linked = linked && b.continuesPrevious
            if visit(b.rr, b.time, linked, b.beatClass) { linked = true }
            i += 1
        }
        // On through the classified beats not visited, to the newest one, which is of the
        // current segment (that of the pending beats) or not.
        while linked && i < classified.endIndex {
            linked = classified[i].continuesPrevious
            i += 1
        }
        linked = linked && classified.tailSegment == segment
        for p in pendingStart..<recent.count {
            if visit(recent[p], recentTimes[p], linked, classify(p)) { linked = true }
        }
        let td = acc.result
        let fraction = beats > 0 ? Double(artifacts) / Double(beats) : 0
        let coverage = seconds > 0 ? rrSum / 1000 / seconds : 0
        let nn = td?.nnCount ?? 0
        let meets = Double(nn) >= quality.minimumNNPerMinute * seconds / 60
            && coverage >= quality.minimumCoverage
            && fraction <= quality.maximumArtifactFraction
            && td?.rmssd != nil
        return HRVWindowResult(windowSeconds: seconds, beatCount: beats, artifactCount: artifacts,
                               artifactPercent: 100 * fraction, coverage: coverage, timeDomain: td,
                               meetsMinimumData: meets)
    }

    /// Every beat's class in arrival order, pending beats provisionally (batch analysis).
    public var classes: [BeatClass] {
        var out: [BeatClass] = []
        out.reserveCapacity(beatCount)
        var i = classified.firstIndex(after: -.infinity)
        while i < classified.endIndex { out.append(classified[i].beatClass); i += 1 }
        for p in pendingStart..<recent.count { out.append(classify(p)) }
        return out
    }
}
