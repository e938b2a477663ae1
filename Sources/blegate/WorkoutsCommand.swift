// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import JSON
import ScanStreamCommands

/// `blegate workouts`: what members got from their classes, and whether the backend has it.
struct WorkoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List the workouts in the cache with their delivery state.",
        discussion: """
            One line per workout, newest first: class, strap, member, start, duration, \
            average and maximum heart rate, points, and delivery (pending, delivered, or \
            refused with the backend's reason). --json prints each workout as sent, with \
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
        var rows: [(doc: StoredDocument, value: JSONValue)] = []
        for doc in stored {
            guard let value = try? JSONValue.parse(doc.json) else {
                printError("blegate workouts: workout \(doc.id) in the cache is not valid JSON; skipped")
                continue
            }
            if let className, value["class_name"]?.stringValue != className { continue }
            rows.append((doc, value))
        }
        rows.sort { ($0.value["start_time"]?.stringValue ?? "") > ($1.value["start_time"]?.stringValue ?? "") }
        if json {
            for (doc, value) in rows {
                guard case var .object(members) = value else { continue }
                members.append(("delivery", .string(doc.state.rawValue)))
                members.append(("revision", .int(doc.revision)))
                if let reason = doc.reason { members.append(("reason", .string(reason))) }
                print(JSONValue.object(members).serialized())
            }
            return
        }
        if rows.isEmpty {
            print(className.map { "no workouts of \"\($0)\" in the cache" } ?? "no workouts in the cache")
            return
        }
        print(pad("CLASS", 18) + pad("STRAP", 19) + pad("MEMBER", 14) + pad("START", 21) + pad("MIN", 5, right: true)
            + pad("AVG", 6, right: true) + pad("MAX", 5, right: true) + pad("PTS", 6, right: true) + "  DELIVERY")
        for (doc, w) in rows {
            let minutes = Int(((w["duration_seconds"]?.doubleValue ?? 0) / 60).rounded())
            let delivery = doc.state == .quarantined ? "refused: " + clip(doc.reason ?? "", 40) : doc.state.rawValue
                + (doc.revision > 1 ? " (revision \(doc.revision))" : "")
            print(pad(clip(w["class_name"]?.stringValue ?? "open gym", 17), 18) + pad(w["device_id"]?.stringValue ?? "-", 19)
                + pad(clip(w["client_id"]?.stringValue ?? "unpaired", 13), 14)
                + pad(String((w["start_time"]?.stringValue ?? "-").prefix(19)), 21) + pad("\(minutes)", 5, right: true)
                + pad(w["avg_heart_rate"]?.doubleValue.map { String(Int($0.rounded())) } ?? "-", 6, right: true)
                + pad(w["max_heart_rate"]?.doubleValue.map { String(Int($0)) } ?? "-", 5, right: true)
                + pad(w["effort_points"]?.doubleValue.map { String(Int($0.rounded())) } ?? "-", 6, right: true)
                + "  " + delivery)
        }
    }
}
