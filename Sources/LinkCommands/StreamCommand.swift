import ArgumentParser
import BlueZ
import DBus
import Gateway
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
            (e.g. "Polar H10*"). Repeat it to follow several straps. Connection news goes \
            to stderr. Ctrl-C stops notifications, disconnects and exits 0. Exit status \
            otherwise as for scan: 2 bus unreachable, 3 bluetoothd not running, 4 no such \
            adapter, 5 adapter powered off, 6 blocked by rfkill.
            """)

    @Option(name: .customLong("device"), help: "Address or name (pattern) of a strap; repeatable.")
    var devices: [String] = []

    @Option(help: "Output: json (one WearMetrics object per line), text (a line for people), none (counts only, for benchmarks).")
    var format: String = "json"

    @Option(help: "Aggregate heart rate per device over S seconds (like streamHR(interval:)).")
    var interval: Double?

    @Option(name: .customLong("hrv-window"), help: "RMSSD window in seconds (SDNN uses max(S, 300)).")
    var hrvWindow: Double = 60

    @Option(help: "Adapter to use (hci0...); default: every adapter.")
    var adapter: String?

    @Option(help: "Notifications via acquire (AcquireNotify, default) or start (StartNotify).")
    var notify: String = "acquire"

    @Option(help: "Stop after S seconds; default: until Ctrl-C.")
    var duration: Double?

    @Option(help: "Bus: system (honours DBUS_SYSTEM_BUS_ADDRESS) or a D-Bus address.")
    var bus = "system"

    @Option(help: "Connection slots per adapter to start from.")
    var maxPerAdapter = 7

    @Option(name: .customLong("gather-ms"),
            help: "AcquireNotify: when notifications come densely, let them gather up to this many ms per wake-up (less CPU, at most this much delay); 0 hands each over at once.")
    var gatherMilliseconds: Double = 8

    public init() {}

    public func validate() throws {
        guard !devices.isEmpty else { throw ValidationError("give at least one --device ADDRESS or NAME") }
        guard StdoutRecordSink.Format(rawValue: format) != nil else { throw ValidationError("--format must be json, text or none") }
        guard NotifyMethod(rawValue: notify) != nil else { throw ValidationError("--notify must be acquire or start") }
        if let interval, interval <= 0 { throw ValidationError("--interval must be positive") }
        if hrvWindow < 10 { throw ValidationError("--hrv-window must be at least 10 seconds") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if !(0...1000).contains(gatherMilliseconds) { throw ValidationError("--gather-ms must be between 0 and 1000") }
    }

    public func run() async throws {
        try await ScanFailure.reported("stream") { try await stream() }
    }

    private func stream() async throws {
        let connection = try await BluetoothPreflight.connect(bus)
        do {
            let mirror = BlueZMirror(connection: connection)
            defer { mirror.stop() }
            try await BluetoothPreflight.start(mirror, bus: bus)
            _ = try BluetoothPreflight.poweredAdapters(mirror.snapshot, named: adapter, bus: bus)
        }

        var config = LinkConfiguration()
        config.adapters = adapter.map { [$0] } ?? []
        config.selection = DeviceSelection(mode: .list, allow: devices.map { DeviceSelection.isAddress($0) ? $0.uppercased() : $0 })
        config.notify = NotifyMethod(rawValue: notify)!
        config.maxPerAdapter = maxPerAdapter
        config.notifyGather = .microseconds(Int64(gatherMilliseconds * 1000))
        config.hrv = HRVEngineConfiguration(rmssdWindow: hrvWindow, sdnnWindow: max(hrvWindow, 300))
        config.jitterSeed = UInt64(truncatingIfNeeded: getpid())

        let output = StdoutRecordSink(format: StdoutRecordSink.Format(rawValue: format)!)
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
        // Output waits in a buffer that this flushes five times a second; with nothing to
        // print (`--format none`, no --interval) it is not started, so nothing wakes idly.
        let flusher = Task {
            guard output.format != .none || aggregator != nil else { return }
            var next = UTCTimestamp.now.secondsSince1970
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                output.flush()
                if let aggregator, let interval, UTCTimestamp.now.secondsSince1970 >= next + interval {
                    next += interval
                    aggregator.tick(now: UTCTimestamp(secondsSince1970: next))
                }
            }
        }
        let runner = Task { try await manager.run() }
        let signals = await SignalWaiter.install()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await signals.wait() }
            if let duration { group.addTask { try? await Task.sleep(for: .milliseconds(Int64(duration * 1000))) } }
            group.addTask { _ = await runner.result }
            await group.next()
            // The runner is not a child: cancel it, or waiting for its result never ends.
            runner.cancel()
            group.cancelAll()
        }
        runner.cancel()
        let result = await runner.result
        flusher.cancel()
        _ = await flusher.value
        output.flush()
        for link in manager.links {
            let c = link.counters
            printError("blegate stream: \(link.name ?? link.address) (\(link.address)): \(c.heartRate) notifications, \(c.malformed) malformed (skipped), \(link.reconnects) reconnect(s)")
        }
        reporter.cancel()
        connection.close()
        if case .failure(let error) = result {
            throw ScanFailure(exit: .bluetoothdNotRunning, message: "cannot read bluetoothd's objects: \(error)")
        }
    }
}
