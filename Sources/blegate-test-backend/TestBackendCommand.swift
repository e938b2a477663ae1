// SPDX-License-Identifier: MIT
import ArgumentParser
import TestBackend
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// `blegate-test-backend`: the loopback backend as its own process, for end-to-end runs.
/// Prints `listening on http://HOST:PORT` once it accepts connections; steer it over
/// `/_admin` (docs/sync.md).
@main
struct TestBackendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blegate-test-backend",
        abstract: "A loopback backend implementing the blegate contract, with fault injection (for tests)."
    )

    @Option(help: "Port to listen on; 0 picks a free one (printed on start).")
    var port: Int = 8080

    @Option(help: "Address to bind.")
    var host: String = "127.0.0.1"

    @Option(help: "Bearer token requests must carry; without it every request is accepted.")
    var token: String?

    @Option(help: "Valid single-use pairing codes, comma-separated.")
    var codes: String = ""

    @Option(help: "Append what is accepted to this file as JSON lines (and read it back on start).")
    var data: String?

    @Option(name: .customLong("samples-path"), help: "Path of the samples endpoint.")
    var samplesPath: String = "/api/v1/samples"

    @Flag(name: .customLong("no-workout-corrections"), help: "Refuse PUT /api/v1/workouts, as a backend without corrections.")
    var noWorkoutCorrections = false

    @Option(name: .customLong("refused-correction-status"),
            help: "The status a refused PUT /api/v1/workouts gets: 405 (POST only) or 404 (no such route).")
    var refusedCorrectionStatus = 405

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, got \(port)") }
        guard refusedCorrectionStatus == 404 || refusedCorrectionStatus == 405 else {
            throw ValidationError("--refused-correction-status must be 404 or 405, got \(refusedCorrectionStatus)")
        }
        guard samplesPath.hasPrefix("/") else { throw ValidationError("--samples-path must start with /, got \(samplesPath)") }
    }

    func run() async throws {
        let codeList = codes.split(separator: ",").map { String($0).trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
        let backend = try TestBackend(.init(host: host, port: port, token: token, pairingCodes: codeList,
                                            dataFile: data, samplesPath: samplesPath,
                                            acceptsWorkoutCorrections: !noWorkoutCorrections,
                                            refusedCorrectionStatus: refusedCorrectionStatus))
        try await backend.start()
        print("listening on \(backend.baseURL)")
        fflush(nil)
        for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) { break }
        await backend.stop()
    }
}

private extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
