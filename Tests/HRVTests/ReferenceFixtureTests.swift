// SPDX-License-Identifier: MIT
import HRV
import Testing

func close(_ a: Double?, _ b: Double, _ tol: Double = 1e-6) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tol
}

@Suite("HRV against neurokit2 / hrv-analysis fixtures")
struct ReferenceFixtureTests {
    @Test("clean series: plain formulas equal the independent implementation to 1e-6", arguments: Fixtures.clean)
    func clean(name: String) throws {
        let fx: CleanFixture = try Fixtures.load(name)
        let td = try #require(HRVTimeDomain.compute(fx.rr_ms))
        let e = fx.expected
        #expect(td.nnCount == fx.rr_ms.count)
        #expect(close(td.rmssd, e.rmssd_ms))
        #expect(close(td.sdnn, e.sdnn_ms))
        #expect(close(td.meanNN, e.mean_nn_ms))
        #expect(close(td.pnn50, e.pnn50_pct))
        #expect(td.nn50 == e.nn50)
        #expect(close(td.meanHR, e.mean_hr_bpm))
        #expect(close(td.meanInstantaneousHR, e.mean_instantaneous_hr_bpm))
        #expect(close(td.sd1, e.sd1_ms))
        #expect(close(td.sd2, e.sd2_ms))
    }

    @Test("clean series: the artifact rule flags nothing, so the pipeline gives the same values", arguments: Fixtures.clean)
    func cleanThroughPipeline(name: String) throws {
        let fx: CleanFixture = try Fixtures.load(name)
        let r = HRVAnalysis.analyze(rrMilliseconds: fx.rr_ms)
        #expect(r.window.artifactCount == 0)
        #expect(r.classes.allSatisfy { $0 == .normal })
        #expect(close(r.window.timeDomain?.rmssd, fx.expected.rmssd_ms))
        #expect(close(r.window.timeDomain?.sdnn, fx.expected.sdnn_ms))
        #expect(close(r.window.timeDomain?.pnn50, fx.expected.pnn50_pct))
        #expect(r.method == "median20")
    }

    @Test("gap: no successive difference across a disconnect (neurokit2 NaN handling)")
    func gap() throws {
        let fx: GapFixture = try Fixtures.load("gap-two-segments")
        var stream = RRStream(retention: .infinity)
        var t = 0.0
        for (i, segment) in fx.segments_ms.enumerated() {
            if i > 0 { stream.breakSegment(); t += 30 }
            for rr in segment { t += rr / 1000; stream.appendBeat(rr, time: t) }
        }
        let w = stream.window(seconds: t + 1, endingAt: t, quality: HRVQualityRules())
        let td = try #require(w.timeDomain)
        #expect(td.differenceCount == fx.expected.difference_count)
        #expect(td.nn50 == fx.expected.nn50)
        #expect(close(td.rmssd, fx.expected.rmssd_ms))
        #expect(close(td.sdnn, fx.expected.sdnn_ms))
        #expect(close(td.meanNN, fx.expected.mean_nn_ms))
        #expect(close(td.pnn50, fx.expected.pnn50_pct))
    }

    @Test("ectopic, missed and extra beats: exactly the injected beats are removed", arguments: Fixtures.artifacts)
    func artifacts(name: String) throws {
        let fx: ArtifactFixture = try Fixtures.load(name)
        let r = HRVAnalysis.analyze(rrMilliseconds: fx.rr_ms)
        #expect(r.classes.map(\.rawValue) == fx.expected_classes)
        let flagged = r.classes.enumerated().filter { $0.element.isArtifact }.map(\.offset)
        #expect(flagged == fx.injected_indices)
        let td = try #require(r.window.timeDomain)
        #expect(td.nnCount == fx.expected.nn_count)
        #expect(td.differenceCount == fx.expected.difference_count)
        #expect(close(td.rmssd, fx.expected.rmssd_ms))
        #expect(close(td.sdnn, fx.expected.sdnn_ms))
        #expect(close(td.meanNN, fx.expected.mean_nn_ms))
        #expect(close(td.pnn50, fx.expected.pnn50_pct))
        // Why it is right: after deletion the values are within 0.5 % of the clean
        // series they were made from, while the uncorrected series is far off.
        #expect(abs(td.rmssd! - fx.ground_truth.rmssd_ms) < 0.005 * fx.ground_truth.rmssd_ms)
        #expect(abs(td.sdnn! - fx.ground_truth.sdnn_ms) < 0.005 * fx.ground_truth.sdnn_ms)
        #expect(fx.uncorrected.rmssd_ms > 1.3 * fx.ground_truth.rmssd_ms)
    }

    @Test("without the artifact rule the ectopic pair inflates RMSSD to the uncorrected value")
    func noRule() throws {
        let fx: ArtifactFixture = try Fixtures.load("artifact-mixed")
        let r = HRVAnalysis.analyze(rrMilliseconds: fx.rr_ms, rule: nil)
        #expect(r.window.artifactCount == 0)
        #expect(close(r.window.timeDomain?.rmssd, fx.uncorrected.rmssd_ms))
        #expect(r.method == "none")
    }
}
