import ArgumentParser
import BlueZ
import DBus
import StrapLinks
import HRV
import LinkPolicy
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// `blegate stream --device ADDR|NAME`: follow one or more straps and print what they
/// measure, reconnecting through whatever BlueZ and the radio throw at it.
public struct StreamCommand: AsyncParsableCommand, Sendable {
    public static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "Connect to heart-rate straps and print WearMetrics records as they arrive.",
        discussion: """
            --device takes an address (A0:9E:1A:12:34:56) or a name; names may use * \
            (e.g. "Polar H10*"), and any letter case for addresses. Repeat it to follow \
            several straps. Connection news goes to stderr; a --device that matches nothing \
            within --find-timeout is said there, with the devices seen. Ctrl-C stops \
            notifications, disconnects and exits 0. Exit status otherwise as for scan: 2 \
            bus unreachable, 3 bluetoothd not running, 4 no such adapter, 5 adapter \
            powered off, 6 blocked by rfkill; and 8 no --device matched any device.
            """
    )

    @Option(name: .customLong("device"), help: ArgumentHelp("Address or name (pattern) of a strap; repeatable.", valueName: "ADDR|NAME"))
    var devices: [String] = []

    @Option(help: ArgumentHelp("Output: json (one WearMetrics object per line), text (a line for people), none (counts only, for benchmarks).", valueName: "FORMAT"))
    var format: StdoutRecordSink.Format = .json

    @Option(help: ArgumentHelp("Aggregate heart rate per device over S seconds (like streamHR(interval:)).", valueName: "S"))
    var interval: Double?

    @Option(help: ArgumentHelp("RMSSD window in seconds (SDNN uses max(S, 300)).", valueName: "S"))
    var hrvWindow: Double = 60

    @Option(help: ArgumentHelp("Adapter to use (hci0...); default: every adapter.", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("Notifications via acquire (AcquireNotify) or start (StartNotify).", valueName: "METHOD"))
    var notify: Notify = .acquire

    /// `NotifyMethod` as the command line names it.
    enum Notify: String, CaseIterable, ExpressibleByArgument {
        case acquire, start
        var method: NotifyMethod { self == .acquire ? .acquire : .start }
    }

    @Option(help: ArgumentHelp("Stop after S seconds; default: until Ctrl-C.", valueName: "S"))
    var duration: Double?

    @Option(help: ArgumentHelp("Seconds of scanning after which a --device that matches no device is reported (exit 8 when none matches).", valueName: "S"))
    var findTimeout: Double = 10

    @Option(help: ArgumentHelp("Bus: system (honours DBUS_SYSTEM_BUS_ADDRESS) or a D-Bus address.", valueName: "BUS"))
    var bus = "system"

    @Option(help: ArgumentHelp("Most links per adapter; the real limit is learned below it.", valueName: "N"))
    var maxLinks: Int?

    @Option(help: ArgumentHelp("Same as --max-links.", valueName: "N"))
    var maxPerAdapter: Int?

    /// Half a second: a person reading the stream or a pipe consuming it sees no
    /// difference, every record carries its notification's arrival time whatever the
    /// window, and with straps notifying independently each wake-up of the reader costs
    /// more than the notifications it reads (docs/benchmarks.md): at 50 notifications a
    /// second two rounds instead of five. `run` keeps 200 ms for the wall's latency.
    @Option(name: .customLong("gather-ms"), help: ArgumentHelp("When notifications (AcquireNotify datagrams, StartNotify and advertisement signals) come densely, let them gather up to this many ms per wake-up (less CPU, at most this much delay; a datagram's record keeps its arrival time, a signal's gets the time it was read); 0 hands each over at once.", valueName: "MS"))
    var gatherMilliseconds: Double = 500

    public init() {}

    /// The links per adapter asked for: --max-links, else --max-per-adapter, else 32.
    var linkLimit: Int { maxLinks ?? maxPerAdapter ?? 32 }

    public func validate() throws {
        guard !devices.isEmpty else { throw ValidationError("give at least one --device ADDRESS or NAME") }
        if let interval, !(interval > 0) { throw ValidationError("--interval must be positive") }
        if !(hrvWindow >= 10) { throw ValidationError("--hrv-window must be at least 10 seconds") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
        if !(1...3600).contains(findTimeout) { throw ValidationError("--find-timeout must be between 1 and 3600 seconds") }
        if !(0...1000).contains(gatherMilliseconds) { throw ValidationError("--gather-ms must be between 0 and 1000") }
        if !(1...64).contains(linkLimit) { throw ValidationError("--max-links must be between 1 and 64") }
    }

    public func run() async throws {
        try ScanExit.leave(await ScanFailure.reported("stream") { try await stream() })
    }

    private func stream() async throws {
        // StartNotify values and advertisements come as signals: they gather as datagrams do.
        let connection = try await BluetoothPreflight.connect(bus, gatherSignals: .microseconds(Int64(gatherMilliseconds * 1000)))
        do {
            let mirror = BlueZMirror(connection: connection)
            defer { mirror.stop() }
            try await BluetoothPreflight.start(mirror, bus: bus)
            _ = try BluetoothPreflight.poweredAdapters(mirror.snapshot, named: adapter, bus: bus)
        }

        var config = LinkConfiguration()
        config.adapters = adapter.map { [$0] } ?? []
        config.selection = DeviceSelection(mode: .list, allow: devices.map { DeviceSelection.isAddress($0) ? $0.uppercased() : $0 })
        config.notify = notify.method
        config.maxLinks = linkLimit
        // stream shows (and benchmarks measure) what devices send, however fast; values
        // longer than BLE allows and RR beyond a record's share are still cut.
        config.notificationLimits = .unlimitedRate
        config.notifyGather = .microseconds(Int64(gatherMilliseconds * 1000))
        config.hrv = HRVEngineConfiguration(rmssdWindow: hrvWindow, sdnnWindow: max(hrvWindow, 300))
        config.jitterSeed = UInt64(truncatingIfNeeded: getpid())

        let output = StdoutRecordSink(format: format)
        let aggregator = interval.map { IntervalAggregator(next: output, interval: $0) }
        let manager = try StrapManager(connection: connection, configuration: config, sink: aggregator ?? output)
        let events = manager.events()
        let reporter = Task {
            for await event in events {
                if case .found(let a, let n, _) = event, let n { output.setName(n, for: a) }
                if case .discovery(_, _, nil) = event { continue }
                printError("blegate stream: " + event.message)
            }
        }
        // Output waits in a buffer that this flushes once per gathering window (records
        // reach it a window at a time anyway), every 200 ms with a shorter window or with
        // --interval, whose ticks it also keeps. With nothing to print (`--format none`, no
        // --interval) it is not started, so nothing wakes idly.
        let flushEvery = aggregator == nil ? Int64(max(200, gatherMilliseconds)) : 200
        let flusher = Task {
            guard output.format != .none || aggregator != nil else { return }
            var next = UTCTimestamp.now.secondsSince1970
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(flushEvery))
                output.flush()
                if let aggregator, let interval, UTCTimestamp.now.secondsSince1970 >= next + interval {
                    next += interval
                    aggregator.tick(now: UTCTimestamp(secondsSince1970: next))
                }
            }
        }
        let runner = Task { try await manager.run() }
        let signals = await SignalWaiter.install()
        let patterns = devices
        let findTimeout = self.findTimeout
        let noMatch = await withTaskGroup(of: String?.self) { group -> String? in
            group.addTask { await signals.wait(); return nil }
            if let duration { group.addTask { try? await Task.sleep(for: .milliseconds(Int64(duration * 1000))); return nil } }
            group.addTask { _ = await runner.result; return nil }
            // After the scan's first seconds: say which --device found nothing; end when none did.
            group.addTask {
                do { try await Task.sleep(for: .milliseconds(Int64(findTimeout * 1000))) } catch { return nil }
                let unmatched = StreamCommand.unmatched(patterns, followed: manager.links.map { (address: $0.address, name: $0.name) })
                guard !unmatched.isEmpty else { await StreamCommand.idle(); return nil }
                let text = StreamCommand.notFound(unmatched, seconds: findTimeout, seen: manager.seenDevices)
                if unmatched.count < patterns.count {
                    printError("blegate stream: " + text + "; following the others")
                    await StreamCommand.idle()
                    return nil
                }
                return text
            }
            let first = await group.next() ?? nil
            // The runner is not a child: cancel it, or waiting for its result never ends.
            runner.cancel()
            group.cancelAll()
            return first
        }
        runner.cancel()
        let result = await runner.result
        flusher.cancel()
        _ = await flusher.value
        output.flush()
        for link in manager.links {
            let c = link.counters
            printError("blegate stream: \(link.name ?? link.address) (\(link.address)): \(c.heartRate) notifications, \(c.malformed) malformed (skipped), \(link.reconnects) reconnect(s), \(c.advertised) from advertisements")
        }
        reporter.cancel()
        connection.close()
        if case .failure(let error) = result {
            throw ScanFailure(exit: .bluetoothdNotRunning, message: "cannot read bluetoothd's objects: \(error)")
        }
        if let noMatch { throw ScanFailure(exit: .noMatch, message: noMatch) }
    }

    /// Until cancelled.
    static func idle() async {
        while (try? await Task.sleep(for: .seconds(3600))) != nil {}
    }

    /// The patterns that no followed device matches.
    static func unmatched(_ patterns: [String], followed: [(address: String, name: String?)]) -> [String] {
        patterns.filter { p in !followed.contains { DeviceSelection.matches(p, address: $0.address, name: $0.name) } }
    }

    /// "no device matching "Polar H10*" found in 10 s of scanning; seen: …".
    static func notFound(_ patterns: [String], seconds: Double, seen: [(address: String, name: String?, heartRate: Bool)]) -> String {
        let what = patterns.map { "\"\($0)\"" }.joined(separator: " or ")
        let shown = seen.prefix(10).map { d in (d.name.map { "\($0) (\(d.address))" } ?? d.address) + (d.heartRate ? " [heart rate]" : "") }
        let list = seen.isEmpty ? "no device at all (is the strap worn, awake and in range?)"
            : shown.joined(separator: ", ") + (seen.count > shown.count ? " and \(seen.count - shown.count) more" : "")
        let whole = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
        return "no device matching \(what) found in \(whole) s of scanning; seen: \(list) (blegate scan --all lists what is in range)"
    }
}
