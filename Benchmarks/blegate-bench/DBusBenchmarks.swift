import DBus
import SystemSupport
import Synchronization
#if canImport(Glibc)
import Glibc
import Timing
#endif

/// `blegate-bench dbus [--rate R] [--count N]`: one process emits PropertiesChanged
/// signals carrying an `ay` Value (what BlueZ sends per GATT notification), this
/// process receives them through the D-Bus layer, and the figures are this
/// process's CPU time per signal, the receive rate and the emitter's own rate.
/// Emitter and receiver are separate processes so each one's CPU is its own.
enum DBusBenchmarks {
    static func run(_ args: [String]) async throws {
        let rates = option(args, "--rate").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [30_000, 0]
        let count = option(args, "--count").flatMap(Int.init) ?? 300_000
        let reference = option(args, "--c-reference")
        for rate in rates {
            try await receive(rate: rate, count: count)
            try await receiveWithHandler(rate: rate, count: count, raw: false)
            try await receiveWithHandler(rate: rate, count: count, raw: true)
            if let reference { try await receiveWithC(reference, rate: rate, count: count) }
        }
    }

    static func receive(rate: Int, count: Int) async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(bus.busAddress)
        defer { connection.close() }
        let path: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d"
        let stream = try await connection.signals(
            matching: DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path),
            bufferSize: 65_536)
        let child = try spawnSelf(["dbus-emit", "--address", bus.address, "--rate", String(rate), "--count", String(count)])

        // Consumed in a task so that a watchdog can end it when the emitter is done
        // and nothing more arrives (signals a full buffer dropped never come).
        let progress = Counter()
        let consumer = Task { () -> (received: Int, outOfOrder: Int, startCPU: Double, startWall: Double) in
            var received = 0
            var lastSeq = -1
            var outOfOrder = 0
            var startCPU = 0.0, startWall = 0.0
            for await signal in stream {
                if received == 0 {
                    startCPU = cpuSeconds()
                    startWall = MonotonicClock.seconds()
                }
                // Touch the payload as a consumer would.
                guard signal.body.count == 3, let props = signal.body[1].stringKeyedValue, let value = props["Value"]?.bytesValue,
                      value.count >= 5 else { continue }
                let seq = Int(value[2]) | Int(value[3]) << 8 | Int(value[4]) << 16
                if seq <= lastSeq { outOfOrder += 1 }
                lastSeq = seq
                received += 1
                progress.value.store(received, ordering: .relaxed)
                if received == count { break }
            }
            return (received, outOfOrder, startCPU, startWall)
        }
        let watchdog = Task {
            var status: Int32 = 0
            while waitpid(child, &status, WNOHANG) == 0 { try? await Task.sleep(for: .milliseconds(50)) }
            var last = -1
            while !Task.isCancelled {
                let now = progress.value.load(ordering: .relaxed)
                if now == last { break }
                last = now
                try? await Task.sleep(for: .seconds(2))
            }
            consumer.cancel()
        }
        let (received, outOfOrder, startCPU, startWall) = await consumer.value
        watchdog.cancel()
        _ = await watchdog.value
        let cpu = cpuSeconds() - startCPU
        let wall = MonotonicClock.seconds() - startWall
        let label = rate == 0 ? "saturation" : "\(rate)/s offered"
        let perSecond = Double(received) / max(wall, 1e-9)
        let cpuPerSignal = cpu / Double(max(received, 1)) * 1e6
        report("dbus receive [\(label)]: \(received) of \(count) signals, lost \(count - received), out of order \(outOfOrder), "
            + "\(fixed(perSecond, 0)) signals/s, CPU \(fixed(cpuPerSignal, 2)) µs/signal (receiver process), "
            + "dropped in buffers \(connection.statistics.signalsDropped)")
    }

    /// The same through a dispatcher-thread handler (no task wake-up per signal).
    static func receiveWithHandler(rate: Int, count: Int, raw: Bool) async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(bus.busAddress)
        defer { connection.close() }
        let path: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d"
        let state = Mutex((received: 0, lastSeq: -1, outOfOrder: 0, startCPU: 0.0, startWall: 0.0, endCPU: 0.0, endWall: 0.0))
        let done = AsyncStream<Void>.makeStream()
        let rule = DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path)
        let onValue: @Sendable (Int) -> Void = { seq in
            let finished = state.withLock { st -> Bool in
                if st.received == 0 {
                    st.startCPU = cpuSeconds()
                    st.startWall = MonotonicClock.seconds()
                }
                if seq <= st.lastSeq { st.outOfOrder += 1 }
                st.lastSeq = seq
                st.received += 1
                if st.received == count {
                    st.endCPU = cpuSeconds()
                    st.endWall = MonotonicClock.seconds()
                    return true
                }
                return false
            }
            if finished { done.continuation.finish() }
        }
        let subscription: DBusSubscription
        if raw {
            subscription = try await connection.subscribeRaw(matching: rule) { view in
                let seq = view.withChangedBytes("Value") { b -> Int in
                    b.count >= 5 ? Int(b[2]) | Int(b[3]) << 8 | Int(b[4]) << 16 : -1
                }
                if let seq, seq >= 0 { onValue(seq) }
            }
        } else {
            subscription = try await connection.subscribe(matching: rule) { signal in
                guard signal.body.count == 3, let props = signal.body[1].stringKeyedValue, let value = props["Value"]?.bytesValue,
                      value.count >= 5 else { return }
                onValue(Int(value[2]) | Int(value[3]) << 8 | Int(value[4]) << 16)
            }
        }
        let child = try spawnSelf(["dbus-emit", "--address", bus.address, "--rate", String(rate), "--count", String(count)])
        let waiter = Task {
            var status: Int32 = 0
            while waitpid(child, &status, WNOHANG) == 0 { try? await Task.sleep(for: .milliseconds(50)) }
            // The emitter is gone; what it sent may still be queued in the daemon.
            var last = -1
            while !Task.isCancelled {
                let now = state.withLock { $0.received }
                if now == last { break }
                last = now
                try? await Task.sleep(for: .seconds(2))
            }
            done.continuation.finish()
        }
        for await _ in done.stream {}
        waiter.cancel()
        _ = await waiter.value
        var status: Int32 = 0
        _ = waitpid(child, &status, 0)
        connection.unsubscribe(subscription)
        let st = state.withLock { $0 }
        let endCPU = st.endCPU > 0 ? st.endCPU : cpuSeconds()
        let endWall = st.endWall > 0 ? st.endWall : MonotonicClock.seconds()
        let label = rate == 0 ? "saturation" : "\(rate)/s offered"
        report("dbus receive, \(raw ? "raw handler" : "handler") [\(label)]: \(st.received) of \(count) signals, lost \(count - st.received), out of order \(st.outOfOrder), "
            + "\(fixed(Double(st.received) / max(endWall - st.startWall, 1e-9), 0)) signals/s, "
            + "CPU \(fixed((endCPU - st.startCPU) / Double(max(st.received, 1)) * 1e6, 2)) µs/signal (receiver process)")
    }

    /// The plain C libdbus receiver (Benchmarks/c-reference) against the same emitter.
    static func receiveWithC(_ binary: String, rate: Int, count: Int) async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let receiver = try spawn(binary, [bus.address, String(count)])
        try await Task.sleep(for: .milliseconds(300))
        let emitter = try spawnSelf(["dbus-emit", "--address", bus.address, "--rate", String(rate), "--count", String(count)])
        var status: Int32 = 0
        _ = waitpid(emitter, &status, 0)
        _ = waitpid(receiver, &status, 0)
    }

    /// The emitting side: a DBusObjectServer property update per notification,
    /// which is the simulator's path; prints its own rate and CPU per emit.
    static func emit(_ args: [String]) async throws {
        guard let address = option(args, "--address") else { throw DBusError(.invalidArgs, "--address needed") }
        let rate = option(args, "--rate").flatMap(Int.init) ?? 0
        let count = option(args, "--count").flatMap(Int.init) ?? 100_000
        let connection = try await DBusConnection.connect(.address(address))
        let server = DBusObjectServer(connection: connection)
        let path: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d"
        try server.add(path, [DBusInterface("org.bluez.GattCharacteristic1", properties: [
            DBusProperty("Value", "ay", value: .bytes([])),
        ])])
        try await Task.sleep(for: .milliseconds(200))  // let the receiver's match rule settle
        let startCPU = cpuSeconds()
        let start = MonotonicClock.seconds()
        var sent = 0
        while sent < count {
            let due = rate == 0 ? count : min(count, Int((MonotonicClock.seconds() - start) * Double(rate)) + 1)
            while sent < due {
                let payload: [UInt8] = [0x10, UInt8(60 + sent % 100), UInt8(truncatingIfNeeded: sent), UInt8(truncatingIfNeeded: sent >> 8), UInt8(truncatingIfNeeded: sent >> 16), 0x03]
                server.setProperties(path, "org.bluez.GattCharacteristic1", [("Value", .bytes(payload))], force: true)
                sent += 1
                if rate == 0, sent % 256 == 0 { await Task.yield() }
            }
            if rate != 0 { try await Task.sleep(for: .microseconds(500)) }
        }
        await connection.flush()  // counted: a signal is emitted once it is on the bus
        let wall = MonotonicClock.seconds() - start
        let cpu = cpuSeconds() - startCPU
        report("dbus emit: \(sent) signals in \(fixed(wall, 2)) s, \(fixed(Double(sent) / wall, 0)) signals/s, CPU \(fixed(cpu / Double(sent) * 1e6, 2)) µs/signal (emitter process)")
        connection.close()
    }
}

func option(_ args: [String], _ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Runs this benchmark binary again with other arguments (the other side of a measurement).
func spawnSelf(_ args: [String]) throws -> pid_t {
    var exe = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &exe, exe.count - 1)
    guard n > 0 else { throw DBusError(.failed, "cannot find own executable") }
    return try spawn(String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self), args)
}

func spawn(_ path: String, _ args: [String]) throws -> pid_t {
    try Spawn.start(path, args)
}

/// Fixed-point text without Foundation's formatters.
func fixed(_ x: Double, _ digits: Int) -> String {
    guard x.isFinite else { return "\(x)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let n = Int((abs(x) * scale).rounded())
    let whole = n / Int(scale)
    let frac = n % Int(scale)
    var f = String(frac)
    while f.count < digits { f = "0" + f }
    return (x < 0 ? "-" : "") + String(whole) + (digits > 0 ? "." + f : "")
}

/// A figure, flushed at once: output into a file or pipe is block-buffered, and a
/// run cut short must not lose what it already measured.
func report(_ line: String) {
    print(line)
    fflush(nil)
}

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}
