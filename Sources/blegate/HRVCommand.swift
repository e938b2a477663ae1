// SPDX-License-Identifier: MIT
import ArgumentParser
import GATT
import HRV

#if canImport(Glibc)
import Glibc
import ScanStreamCommands
#endif

/// `blegate hrv [--window S] [FILE]`: HRV of a recorded RR series, through the same
/// pipeline (range filter, median20 artifact rule, deletion) the gateway uses.
struct HRVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrv",
        abstract: "Compute HRV metrics from RR intervals in milliseconds.",
        discussion: """
            Input: one RR interval (ms) per line, or a JSON array; '#' starts a comment. \
            FILE absent or '-' reads standard input. Without --window the whole series is \
            one window; with --window S, the last S seconds.
            """
    )

    @Option(name: .long, help: "Window length in seconds (default: the whole series).")
    var window: Double?

    @Flag(name: .long, help: "Skip artifact detection and the range filter (plain formulas).")
    var raw = false

    @Flag(name: .long, help: "List the index and class of every rejected beat.")
    var listArtifacts = false

    @Argument(help: "File with RR intervals in ms ('-' or absent: stdin).")
    var file: String?

    func run() throws {
        let text: String
        do {
            text = try readInput(file)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        let rr: [Double]
        switch parseRRIntervals(text) {
        case let .success(values): rr = values
        case let .failure(e):
            printError("error: \(e.message)")
            throw ExitCode(1)
        }
        if let w = window, !(w > 0) {
            printError("error: --window must be positive")
            throw ExitCode(1)
        }
        let result = HRVAnalysis.analyze(rrMilliseconds: rr, windowSeconds: window, rule: raw ? nil : .median20)
        print(try JSONOutput.text(Report(result, rr: rr, listArtifacts: listArtifacts), pretty: true))
    }
}

extension HRVCommand {
    /// What `blegate hrv` prints; the time-domain figures only when there were enough
    /// beats for them, the artifacts only with --list-artifacts.
    struct Report: Encodable {
        let result: HRVAnalysis.Result
        let rr: [Double]
        let listArtifacts: Bool

        init(_ result: HRVAnalysis.Result, rr: [Double], listArtifacts: Bool) {
            self.result = result
            self.rr = rr
            self.listArtifacts = listArtifacts
        }

        enum Key: String, CodingKey {
            case method, windowS = "window_s", beats, nnCount = "nn_count", artifactCount = "artifact_count"
            case artifactPct = "artifact_pct", meetsMinimumData = "meets_minimum_data", rmssdMs = "rmssd_ms"
            case sdnnMs = "sdnn_ms", pnn50Pct = "pnn50_pct", nn50, meanNNMs = "mean_nn_ms", meanHRBpm = "mean_hr_bpm"
            case meanInstantaneousHRBpm = "mean_instantaneous_hr_bpm", sd1Ms = "sd1_ms", sd2Ms = "sd2_ms"
            case successiveDifferences = "successive_differences", artifacts
        }

        func encode(to encoder: any Encoder) throws {
            let w = result.window
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(result.method, forKey: .method)
            // Sums of milliseconds carry binary noise (6.1000000000000005); ms resolution is exact enough.
            try c.encode(JSONOutput.finite((w.windowSeconds * 1000).rounded() / 1000), forKey: .windowS)
            try c.encode(w.beatCount, forKey: .beats)
            try c.encode(w.nnCount, forKey: .nnCount)
            try c.encode(w.artifactCount, forKey: .artifactCount)
            try c.encode(JSONOutput.finite(w.artifactPercent), forKey: .artifactPct)
            try c.encode(w.meetsMinimumData, forKey: .meetsMinimumData)
            if let td = w.timeDomain {
                try c.encode(JSONOutput.finite(td.rmssd), forKey: .rmssdMs)
                try c.encode(JSONOutput.finite(td.sdnn), forKey: .sdnnMs)
                try c.encode(JSONOutput.finite(td.pnn50), forKey: .pnn50Pct)
                try c.encode(td.nn50, forKey: .nn50)
                try c.encode(JSONOutput.finite(td.meanNN), forKey: .meanNNMs)
                try c.encode(JSONOutput.finite(td.meanHR), forKey: .meanHRBpm)
                try c.encode(JSONOutput.finite(td.meanInstantaneousHR), forKey: .meanInstantaneousHRBpm)
                try c.encode(JSONOutput.finite(td.sd1), forKey: .sd1Ms)
                try c.encode(JSONOutput.finite(td.sd2), forKey: .sd2Ms)
                try c.encode(td.differenceCount, forKey: .successiveDifferences)
            }
            if listArtifacts {
                try c.encode(result.classes.enumerated().filter { $0.element.isArtifact }.map {
                    Artifact(index: $0.offset, rrMs: JSONOutput.finite(rr[$0.offset]), class: $0.element.rawValue)
                }, forKey: .artifacts)
            }
        }
    }

    struct Artifact: Encodable {
        var index: Int
        var rrMs: Double?
        var `class`: String

        enum CodingKeys: String, CodingKey { case index, rrMs = "rr_ms", `class` }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(index, forKey: .index)
            try c.encode(rrMs, forKey: .rrMs)
            try c.encode(`class`, forKey: .class)
        }
    }
}

struct RRParseError: Error {
    var message: String
}

/// One value per line or a JSON array (commas, brackets and whitespace all separate).
func parseRRIntervals(_ text: String) -> Result<[Double], RRParseError> {
    var values: [Double] = []
    for (lineNumber, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        for token in content.split(whereSeparator: { $0 == "," || $0 == "[" || $0 == "]" || $0 == " " || $0 == "\t" || $0 == "\r" }) {
            guard let v = Double(token), v.isFinite, v > 0 else {
                return .failure(RRParseError(message: "line \(lineNumber + 1): not a positive RR interval in ms: \(token)"))
            }
            values.append(v)
        }
    }
    guard !values.isEmpty else { return .failure(RRParseError(message: "no RR intervals in input")) }
    return .success(values)
}

struct InputError: Error, CustomStringConvertible {
    var description: String
}

/// Reads a whole file, or standard input for nil or "-", through file descriptors (the
/// C `stdin` global is rejected by Swift 6 strict concurrency).
func readInput(_ path: String?) throws -> String {
    let fd: Int32
    if let path, path != "-" {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw InputError(description: "cannot open \(path)") }
    } else {
        fd = 0
    }
    defer { if fd != 0 { close(fd) } }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n < 0 { throw InputError(description: "read error on \(path ?? "stdin")") }
        if n == 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}
