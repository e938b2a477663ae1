// SPDX-License-Identifier: MIT
import Foundation

/// Fixtures written by scripts/gen-hrv-fixtures.py (neurokit2 / hrv-analysis values).
struct CleanFixture: Decodable {
    struct Expected: Decodable {
        var rmssd_ms: Double
        var sdnn_ms: Double
        var mean_nn_ms: Double
        var pnn50_pct: Double
        var nn50: Int
        var mean_hr_bpm: Double
        var mean_instantaneous_hr_bpm: Double
        var sd1_ms: Double
        var sd2_ms: Double
    }
    var name: String
    var rr_ms: [Double]
    var expected: Expected
}

struct GapFixture: Decodable {
    struct Expected: Decodable {
        var rmssd_ms: Double
        var sdnn_ms: Double
        var mean_nn_ms: Double
        var difference_count: Int
        var nn50: Int
        var pnn50_pct: Double
    }
    var segments_ms: [[Double]]
    var expected: Expected
}

struct ArtifactFixture: Decodable {
    struct Expected: Decodable {
        var nn_count: Int
        var difference_count: Int
        var rmssd_ms: Double
        var sdnn_ms: Double
        var mean_nn_ms: Double
        var pnn50_pct: Double
    }
    struct Values: Decodable {
        var rmssd_ms: Double
        var sdnn_ms: Double
    }
    var name: String
    var rr_ms: [Double]
    var injected_indices: [Int]
    var expected_classes: [String]
    var expected: Expected
    var ground_truth: Values
    var uncorrected: Values
}

enum Fixtures {
    static func load<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures")
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures").appendingPathComponent(name + ".json")
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }

    static let clean = ["clean-rest-60s", "clean-rest-300s", "clean-exercise-120s", "clean-high-hrv-120s"]
    static let artifacts = ["artifact-ectopic", "artifact-missed", "artifact-extra", "artifact-mixed"]
}
