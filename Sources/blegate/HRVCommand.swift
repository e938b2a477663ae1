// SPDX-License-Identifier: MIT
import JSON
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
        let w = result.window
        var members: [(String, JSONValue)] = [
            ("method", .string(result.method)),
            // Sums of milliseconds carry binary noise (6.1000000000000005); ms resolution is exact enough.
            ("window_s", .double((w.windowSeconds * 1000).rounded() / 1000)),
            ("beats", .int(w.beatCount)),
            ("nn_count", .int(w.nnCount)),
            ("artifact_count", .int(w.artifactCount)),
            ("artifact_pct", .double(w.artifactPercent)),
            ("meets_minimum_data", .bool(w.meetsMinimumData)),
        ]
        if let td = w.timeDomain {
            members += [
                ("rmssd_ms", td.rmssd.map(JSONValue.double) ?? .null),
                ("sdnn_ms", td.sdnn.map(JSONValue.double) ?? .null),
                ("pnn50_pct", td.pnn50.map(JSONValue.double) ?? .null),
                ("nn50", .int(td.nn50)),
                ("mean_nn_ms", .double(td.meanNN)),
                ("mean_hr_bpm", .double(td.meanHR)),
                ("mean_instantaneous_hr_bpm", .double(td.meanInstantaneousHR)),
                ("sd1_ms", td.sd1.map(JSONValue.double) ?? .null),
                ("sd2_ms", td.sd2.map(JSONValue.double) ?? .null),
                ("successive_differences", .int(td.differenceCount)),
            ]
        }
        if listArtifacts {
            members.append(("artifacts", .array(result.classes.enumerated().filter { $0.element.isArtifact }.map {
                .object([("index", .int($0.offset)), ("rr_ms", .double(rr[$0.offset])), ("class", .string($0.element.rawValue))])
            })))
        }
        print(JSONValue.object(members).serialized(pretty: true))
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
