// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import ScanStreamCommands
import Workouts

/// `blegate workouts`: what members got from their classes, and whether the backend has it.
struct WorkoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List the workouts in the cache with their delivery state.",
        discussion: """
            One line per workout, newest first: its id (what blegate export --workout and \
            the backend know it by), class, strap, member, local start, duration, average \
            and maximum heart rate, points, and delivery (pending, delivered, or refused \
            with the backend's reason). --json prints each workout as sent, with \
            its delivery state. Exit status: 0 listed, 1 the cache could not be read, 78 \
            configuration error.
            """)

    @OptionGroup var gateway: GatewayOptions

    @Option(name: .customLong("class"), help: "Only the workouts of classes with this name.")
    var className: String?

    @Flag(help: "One JSON object per line: the workout, plus delivery, revision and reason.")
    var json = false

    func run() async throws {
        let config = try gateway.load()
        let cache = try gateway.openCache(config)
        let stored: [StoredDocument]
        do {
            stored = try await cache.documents(kind: .workout)
        } catch {
            printError("blegate workouts: cannot read the cache: \(error)")
            throw ExitCode(1)
        }
        var rows: [(doc: StoredDocument, workout: Workout)] = []
        for doc in stored {
            // The zones' bounds are not in the JSON and not shown here.
            guard let workout = try? Workout(json: doc.json, zoneMaxHR: 0, zoneRestingHR: nil) else {
                printError("blegate workouts: workout \(doc.id) in the cache is not a readable workout; skipped")
                continue
            }
            if let className, workout.className != className { continue }
            rows.append((doc, workout))
        }
        rows.sort { $0.workout.startTime.millisecondsSince1970 > $1.workout.startTime.millisecondsSince1970 }
        if json {
            for (doc, workout) in rows {
                print(try JSONOutput.text(Listed(workout: workout, delivery: doc.state.rawValue, revision: doc.revision, reason: doc.reason)))
            }
            return
        }
        if rows.isEmpty {
            print(className.map { "no workouts of \"\($0)\" in the cache" } ?? "no workouts in the cache")
            return
        }
        print(pad("ID", 38) + pad("CLASS", 18) + pad("STRAP", 19) + pad("MEMBER", 14) + pad("START", 27) + pad("MIN", 5, right: true)
            + pad("AVG", 6, right: true) + pad("MAX", 5, right: true) + pad("PTS", 6, right: true) + "  DELIVERY")
        for (doc, w) in rows {
            let minutes = Int((Double(w.durationSeconds) / 60).rounded())
            let delivery = doc.state == .quarantined ? "refused: " + clip(doc.reason ?? "", 40) : doc.state.rawValue
                + (doc.revision > 1 ? " (revision \(doc.revision))" : "")
            print(pad(doc.id, 38) + pad(clip(w.className ?? "open gym", 17), 18) + pad(w.deviceID, 19)
                + pad(clip(w.clientID ?? "unpaired", 13), 14)
                + pad(LocalTime.text(w.startTime), 27) + pad("\(minutes)", 5, right: true)
                + pad(String(Int(w.avgHeartRate.rounded())), 6, right: true)
                + pad(String(w.maxHeartRate), 5, right: true)
                + pad(String(Int(w.effortPoints.rounded())), 6, right: true)
                + "  " + delivery)
        }
    }

    /// A workout of `--json`: the contract's keys, and the cache's delivery state,
    /// revision and (when refused) reason.
    struct Listed: Encodable {
        var workout: Workout
        var delivery: String
        var revision: Int
        var reason: String?

        enum Key: String, CodingKey { case delivery, revision, reason }

        func encode(to encoder: any Encoder) throws {
            try workout.encode(to: encoder)
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(delivery, forKey: .delivery)
            try c.encode(revision, forKey: .revision)
            try c.encodeIfPresent(reason, forKey: .reason)
        }
    }
}
