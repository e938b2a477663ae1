// SPDX-License-Identifier: MIT
import DBus
#if canImport(Glibc)
import Glibc
#endif
import Timing

/// `blegate-bench stream --blegate PATH`: what a notification costs `blegate stream`,
/// `blegate run` and bleak, each as a process of its own, at real arrival times.
///
/// The simulator (`blegate simulate --private-bus`, another process) notifies as real
/// straps do: every strap on its own clock, at its own phase, with heart-beat-like jitter,
/// never two straps in one batch (`ArrivalClock`), so every notification pays its own
/// wake-up. Per scenario the benchmark waits until every strap has notified, then 2 s,
/// then reads over a steady window, from outside the client process: its CPU time (user +
/// system of all its threads, the process's CPU-time clock: /proc/PID/stat's utime+stime
/// at nanosecond resolution), its voluntary and involuntary context switches (summed over
/// /proc/PID/task/*/status; a voluntary one is the thread going to sleep, so one wake-up
/// follows each), and the Heart Rate notifications the simulator's payload log says left
/// in the window. Then it pauses the straps (SetRate to one per 1000 s), lets the client
/// drain, reads its peak RSS (VmHWM) and stops it; for `blegate stream` and bleak the
/// counts they print at exit are compared with the log: the difference is exact.
///
/// Clients: `blegate stream --format none` with AcquireNotify and with StartNotify
/// (decoding, the WearMetrics record, HRV; nothing printed per record); bleak (PyPI, in
/// its own venv, `Benchmarks/bleak/bleak_stream.py`: `start_notify` on every strap and a
/// callback that decodes the heart rate); `blegate run` (cache only: every record
/// committed to SQLite; no backend, no wall), per record, measured once its class is
/// settled (`runSettle` after every strap notifies: it links them all, then scans in
/// bursts, as it does for the rest of a class).
enum StreamBenchmarks {
    /// Long enough for `run` to link every strap and pass a whole scanning cycle
    /// (3 s in every 10 s) once they all stream.
    static let runSettle = Duration.seconds(30)

    enum Client: Equatable {
        case stream(String)
        case bleak
        case run
    }

    struct Scenario {
        var label: String
        var straps: Int
        var rate: Double
        var adapters = 1
        var client: Client
        var total: Double { Double(straps) * rate }
    }

    struct Outcome {
        var scenario: Scenario
        var window: Double
        var sentInWindow: Int
        var cpuInWindow: Double
        var voluntary: Int
        var involuntary: Int
        var peakRSS: Int
        var rssAnon: Int
        var rssFile: Int
        var sent: Int
        /// What the client counted (nil: `blegate run`, whose records are in its cache).
        var received: Int?
        var droppedAtSocket: Int
    }

    struct Tools {
        var blegate: String
        var python: String?
        var bleakScript: String
        var gather: String?
    }

    static func run(_ args: [String]) async throws {
        guard let blegate = option(args, "--blegate") else {
            throw BenchError("--blegate PATH needed (the release blegate binary; scripts/bench.sh stream passes it)")
        }
        let seconds = option(args, "--seconds").flatMap(Double.init) ?? 20
        let straps = option(args, "--straps").flatMap(Int.init) ?? 10
        let totals = option(args, "--total").map { $0.split(separator: ",").compactMap { Double($0) } } ?? [500, 50]
        let clients = option(args, "--clients").map { $0.split(separator: ",").map(String.init) } ?? ["acquire", "start", "bleak", "run"]
        let tools = Tools(blegate: blegate, python: option(args, "--python"),
                          bleakScript: option(args, "--bleak-script") ?? "Benchmarks/bleak/bleak_stream.py", gather: option(args, "--gather-ms"))

        var scenarios: [Scenario] = []
        for total in totals {
            for c in clients {
                switch c {
                case "acquire", "start":
                    scenarios.append(Scenario(label: "stream \(c) \(straps)×\(fixed(total / Double(straps), 0)) Hz", straps: straps,
                                              rate: total / Double(straps), client: .stream(c)))
                case "bleak":
                    guard tools.python != nil else { report("bleak: not measured (no --python with bleak installed)"); continue }
                    scenarios.append(Scenario(label: "bleak \(straps)×\(fixed(total / Double(straps), 0)) Hz", straps: straps,
                                              rate: total / Double(straps), client: .bleak))
                case "run":
                    // A gateway drops a strap's notifications above 5/s (NotificationLimits):
                    // run's straps notify at 1 Hz, or 4 Hz for the higher totals, as many as
                    // the total needs, at most 32 links per adapter.
                    let hz = total <= 100 ? 1.0 : 4.0
                    let n = Int((total / hz).rounded(.up))
                    scenarios.append(Scenario(label: "run \(n)×\(fixed(hz, 0)) Hz", straps: n, rate: hz,
                                              adapters: (n + 31) / 32, client: .run))
                default:
                    throw BenchError("unknown client \(c) (acquire, start, bleak, run)")
                }
            }
        }

        report("real arrivals (own clock, phase and jitter per strap), \(fixed(seconds, 0)) s steady window per scenario; "
               + "\(onlineCPUs()) CPUs, load \(loadAverage())")
        var outcomes: [Outcome] = []
        for s in scenarios {
            do {
                let o = try await measure(s, tools: tools, seconds: seconds)
                outcomes.append(o)
                report(line(o))
            } catch {
                report("\(s.label): not measured: \(error)")
            }
        }
        report("")
        report(table(outcomes))
        report("")
        for total in totals {
            let at = outcomes.filter { $0.scenario.total == total && $0.scenario.client != .run }
            guard let bleak = at.first(where: { $0.scenario.client == .bleak }), bleak.sentInWindow > 0 else { continue }
            let b = bleak.cpuInWindow / Double(bleak.sentInWindow)
            for o in at where o.scenario.client != .bleak && o.sentInWindow > 0 {
                let r = o.cpuInWindow / Double(o.sentInWindow) / b
                report("\(fixed(total, 0))/s: \(o.scenario.label) / bleak = \(fixed(r, 3)) of bleak's CPU per notification")
            }
        }
    }

    static func measure(_ s: Scenario, tools: Tools, seconds: Double) async throws -> Outcome {
        var template = Array("/tmp/blegate-bench-stream-XXXXXX".utf8CString)
        guard let dirPointer = mkdtemp(&template) else { throw BenchError("mkdtemp failed (errno \(errno))") }
        let dir = String(cString: dirPointer)
        let log = dir + "/sent.jsonl"

        let sim = try ChildProcess(tools.blegate, ["simulate", "--private-bus", "--straps", String(s.straps), "--rate", fixed(s.rate, 3),
                                                   "--adapters", String(s.adapters), "--seed", "7", "--payload-log", log],
                                   name: "blegate simulate", stdout: dir + "/simulate.out", stderr: dir + "/simulate.err")
        var simStopped = false
        defer { if !simStopped { kill(sim.pid, SIGKILL); var st: Int32 = 0; _ = waitpid(sim.pid, &st, 0) } }
        let address = try await waitForBusAddress(dir + "/simulate.out", sim)

        let client: ChildProcess
        switch s.client {
        case .stream(let method):
            client = try ChildProcess(tools.blegate, ["stream", "--bus", address, "--device", "*", "--notify", method,
                                                      "--format", "none", "--max-per-adapter", String(max(7, s.straps))]
                                                      + (tools.gather.map { ["--gather-ms", $0] } ?? []),
                                      name: "blegate stream", stdout: nil, stderr: dir + "/client.err")
        case .bleak:
            client = try ChildProcess("/usr/bin/env", ["DBUS_SYSTEM_BUS_ADDRESS=" + address, tools.python ?? "python3", tools.bleakScript, String(s.straps)],
                                      name: "bleak", stdout: nil, stderr: dir + "/client.err")
        case .run:
            let config = """
                [gateway]
                id = "bench"
                state_directory = "\(dir)"
                [bluetooth]
                max_links = 32
                [status]
                socket = "\(dir)/status.sock"
                [metrics]
                listen = ""
                [display]
                listen = ""

                """
            guard writeText(dir + "/blegate.toml", config) else { throw BenchError("cannot write \(dir)/blegate.toml") }
            client = try ChildProcess(tools.blegate, ["run", "--config", dir + "/blegate.toml", "--bus", address],
                                      name: "blegate run", stdout: nil, stderr: dir + "/client.err")
        }
        var clientStopped = false
        defer { if !clientStopped { kill(client.pid, SIGKILL); var st: Int32 = 0; _ = waitpid(client.pid, &st, 0) } }

        try await waitForStraps(log, count: s.straps, client, errors: dir + "/client.err")
        try await Task.sleep(for: .seconds(2))  // every strap at its pace, HRV windows filling
        if s.client == .run { try await Task.sleep(for: runSettle) }

        let t0 = monotonicMilliseconds()
        let cpu0 = try client.cpuSeconds()
        let cs0 = client.contextSwitches()
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let cpu1 = try client.cpuSeconds()
        let cs1 = client.contextSwitches()
        let switches = ChildProcess.contextSwitches(from: cs0, to: cs1)
        let t1 = monotonicMilliseconds()

        // Pause the straps, so that what the log holds is everything that will ever be sent.
        let control = try await DBusConnection.connect(.address(address))
        defer { control.close() }
        try await control.call(destination: "org.blegate.Simulator", path: "/org/blegate/Simulator", interface: "org.blegate.Simulator1",
                               member: "SetRate", [.double(0.001)])
        try await Task.sleep(for: .seconds(1))
        try await control.call(destination: "org.blegate.Simulator", path: "/org/blegate/Simulator", interface: "org.blegate.Simulator1",
                               member: "FlushPayloadLog")
        let dropped = try await control.call(destination: "org.blegate.Simulator", path: "/org/blegate/Simulator",
                                             interface: "org.blegate.Simulator1", member: "DroppedNotifications").first?.integerValue ?? 0
        if s.client == .run {
            // run keeps housekeeping (links, cache, registry) for its many straps: it may
            // never look idle, and its losses are not counted here anyway.
            try? await client.waitUntilIdle(timeout: 10)
        } else {
            try await client.waitUntilIdle()
        }
        let peak = client.status("VmHWM") ?? 0
        let anon = client.status("RssAnon") ?? 0
        let file = client.status("RssFile") ?? 0

        let status = await client.stop(s.client == .run ? SIGTERM : SIGINT)
        clientStopped = true
        guard status == 0 else { throw BenchError("\(client.name) exited with status \(status); see \(dir)/client.err") }
        let errors = readText(dir + "/client.err") ?? ""
        var received: Int?
        switch s.client {
        case .stream:
            let summary = StreamSummary(errors)
            guard summary.devices == s.straps else {
                throw BenchError("blegate stream summarised \(summary.devices) device(s), expected \(s.straps); see \(dir)/client.err")
            }
            received = summary.notifications
        case .bleak:
            guard let line = errors.split(separator: "\n").last(where: { $0.hasPrefix("notifications ") }),
                  let n = Int(line.dropFirst("notifications ".count)) else {
                throw BenchError("bleak printed no count at exit; see \(dir)/client.err")
            }
            received = n
        case .run:
            received = nil
        }
        control.close()
        await sim.stop(SIGINT)
        simStopped = true

        guard let bytes = readBytes(log) else { throw BenchError("no payload log at \(log)") }
        let tally = PayloadLogTally(bytes: bytes, windowMilliseconds: t0..<t1)
        unlink(log)
        return Outcome(scenario: s, window: (t1 - t0) / 1000, sentInWindow: tally.inWindow, cpuInWindow: cpu1 - cpu0,
                       voluntary: switches.voluntary, involuntary: switches.involuntary,
                       peakRSS: peak, rssAnon: anon, rssFile: file, sent: tally.total, received: received,
                       droppedAtSocket: Int(dropped))
    }

    /// Waits until the payload log shows Heart Rate notifications from `count` straps:
    /// every strap is followed, whoever the client is.
    static func waitForStraps(_ log: String, count: Int, _ client: ChildProcess, errors: String) async throws {
        let end = MonotonicClock.seconds() + 60 + Double(count)
        var seen = 0
        while MonotonicClock.seconds() < end {
            seen = PayloadLogTally.straps(bytes: readBytes(log) ?? [])
            if seen >= count { return }
            if client.hasExited() { throw BenchError("\(client.name) exited early: \((readText(errors) ?? "").suffix(600))") }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw BenchError("only \(seen) of \(count) straps notifying after the timeout; see \(errors)")
    }

    /// The simulator's first stdout line is `DBUS_SYSTEM_BUS_ADDRESS=...`; `ready:` follows
    /// once org.bluez is served.
    static func waitForBusAddress(_ path: String, _ sim: ChildProcess) async throws -> String {
        let end = MonotonicClock.seconds() + 30
        while MonotonicClock.seconds() < end {
            if let text = readText(path), text.contains("\nready:") || text.hasPrefix("ready:"),
               let first = text.split(separator: "\n").first, first.hasPrefix("DBUS_SYSTEM_BUS_ADDRESS=") {
                return String(first.dropFirst("DBUS_SYSTEM_BUS_ADDRESS=".count))
            }
            if sim.hasExited() { throw BenchError("blegate simulate exited before it was ready") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("blegate simulate not ready after 30 s")
    }

    // MARK: Output

    static func line(_ o: Outcome) -> String {
        "\(o.scenario.label): \(perNotification(o)) µs/notification, \(perNotification(o, Double(o.voluntary), scale: 1)) wake-ups and "
            + "\(perNotification(o, Double(o.involuntary), scale: 1)) involuntary switches per notification, "
            + "\(fixed(Double(o.sentInWindow) / o.window, 0))/s achieved (\(fixed(o.scenario.total, 0))/s offered), "
            + "CPU \(fixed(o.cpuInWindow / o.window * 100, 2)) %, peak RSS \(mib(o.peakRSS)) MiB (anon \(mib(o.rssAnon)), file \(mib(o.rssFile)) at end), "
            + "sent \(o.sent), received \(o.received.map(String.init) ?? "-"), dropped at full socket \(o.droppedAtSocket)"
    }

    static func perNotification(_ o: Outcome) -> String { perNotification(o, o.cpuInWindow, scale: 1e6) }

    static func perNotification(_ o: Outcome, _ amount: Double, scale: Double) -> String {
        o.sentInWindow > 0 ? fixed(amount * scale / Double(o.sentInWindow), 2) : "-"
    }

    static func table(_ outcomes: [Outcome]) -> String {
        let header = ["scenario", "offered/s", "achieved/s", "µs/notif", "wake-ups/notif", "invol./notif", "CPU %", "peak RSS MiB",
                      "sent", "received", "lost", "socket drops"]
        var rows = [header]
        for o in outcomes {
            rows.append([o.scenario.label, fixed(o.scenario.total, 0), fixed(Double(o.sentInWindow) / o.window, 0),
                         perNotification(o), perNotification(o, Double(o.voluntary), scale: 1), perNotification(o, Double(o.involuntary), scale: 1),
                         fixed(o.cpuInWindow / o.window * 100, 2), mib(o.peakRSS),
                         String(o.sent), o.received.map(String.init) ?? "-", o.received.map { String(o.sent - $0) } ?? "-",
                         String(o.droppedAtSocket)])
        }
        var widths = [Int](repeating: 0, count: header.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        return rows.enumerated().map { n, r in
            let cells = r.enumerated().map { i, c in
                let pad = String(repeating: " ", count: widths[i] - c.count)
                return i == 0 ? c + pad : pad + c
            }
            let text = "| " + cells.joined(separator: " | ") + " |"
            return n == 0 ? text + "\n|" + widths.enumerated().map { i, w in
                String(repeating: "-", count: w + 1) + (i == 0 ? "-" : ":")
            }.joined(separator: "|") + "|" : text
        }.joined(separator: "\n")
    }

    static func mib(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 1) }

    static func monotonicMilliseconds() -> Double { MonotonicClock.seconds() * 1000 }

    static func onlineCPUs() -> Int { sysconf(Int32(_SC_NPROCESSORS_ONLN)) }

    static func loadAverage() -> String {
        (readText("/proc/loadavg") ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// What `blegate stream` prints per device at exit:
/// `blegate stream: NAME (ADDR): N notifications, M malformed (skipped), K reconnect(s), A from advertisements`.
struct StreamSummary {
    var devices = 0
    var notifications = 0
    var reconnects = 0

    init(_ stderr: String) {
        for line in stderr.split(separator: "\n") where line.hasSuffix(" from advertisements") {
            let words = line.split(separator: " ")
            guard let n = words.firstIndex(where: { $0 == "notifications," }), n > 0,
                  let m = words.firstIndex(where: { $0 == "malformed" }), m > 0,
                  let r = words.firstIndex(where: { $0 == "reconnect(s)," }), r > 0,
                  let hr = Int(words[n - 1]), let bad = Int(words[m - 1]), let k = Int(words[r - 1]) else { continue }
            devices += 1
            notifications += hr + bad
            reconnects += k
        }
    }
}
