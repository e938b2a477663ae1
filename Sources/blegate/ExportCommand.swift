// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import BlegateRun
import ScanStreamCommands
import WearMetrics
import Workouts

/// `blegate export --workout ID --format fit|tcx`: a member's workout as a file Strava and
/// Garmin Connect import.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a workout as a FIT activity or a TCX file.",
        discussion: """
            The figures are the workout's as sent to the backend (blegate workouts lists \
            the ids); the heart-rate track comes from the strap's records in the cache, so \
            a workout older than cache.retention exports without its track. Strava and \
            Garmin Connect import both formats. Exit status: 0 written, 1 the cache could \
            not be read or the file written, 64 no such workout, 78 configuration error.
            """)

    @OptionGroup var gateway: GatewayOptions

    @Option(help: "The workout's id (blegate workouts --json shows them); a unique prefix is enough.")
    var workout: String

    @Option(help: "fit or tcx.")
    var format: String = "fit"

    @Option(help: "The file to write (created mode 0600); default: workout-<id>.<format> here.")
    var output: String?

    func validate() throws {
        guard ["fit", "tcx"].contains(format) else { throw ValidationError("--format must be fit or tcx, got \"\(format)\"") }
        guard workout.count >= 4 else { throw ValidationError("--workout needs at least the first 4 characters of the id") }
    }

    func run() async throws {
        let config = try gateway.load()
        let cache = try gateway.openCache(config)
        let matches: [StoredDocument]
        do {
            matches = try await cache.documents(kind: .workout).filter { $0.id.hasPrefix(workout.lowercased()) }
        } catch {
            printError("blegate export: cannot read the cache: \(error)")
            throw ExitCode(1)
        }
        guard matches.count == 1, let doc = matches.first else {
            printError(matches.isEmpty ? "blegate export: no workout \(workout) in the cache (blegate workouts lists them)"
                                       : "blegate export: \(matches.count) workouts start with \(workout); give more of the id")
            throw ExitCode(64)
        }
        let file = output ?? "workout-\(doc.id.prefix(8)).\(format)"
        do {
            var w = try Workout(json: doc.json, zoneMaxHR: 0, zoneRestingHR: nil)
            let device = w.deviceID, start = w.startTime.millisecondsSince1970, end = w.endTime.millisecondsSince1970
            let records = try await cache.records(device: device, from: start, to: end).map(\.record)
            let machines = try await WorkoutProfiles.machineRecords(configuration: config, cache: cache, device: device, from: start, to: end)
            let bounds = await WorkoutProfiles.zoneBounds(configuration: config, cache: cache, device: device, clientID: w.clientID)
            w.zoneMaxHR = bounds.maxHR
            w.zoneRestingHR = bounds.restingHR
            w.takeTrack(records: records, machines: machines)
            let out = try OutputFile(path: file)
            if format == "fit" { try out.write(bytes: FITWriter.encode(w)) } else { try out.write(TCXWriter.document(w)) }
            try out.close()
            print("wrote \(file): \(w.className ?? "open gym"), \(w.durationSeconds / 60) min, \(w.samples.count) heart rates"
                + (w.samples.isEmpty ? " (the strap's records are no longer in the cache: no track)" : ""))
        } catch {
            printError("blegate export: \(error)")
            throw ExitCode(1)
        }
    }
}
