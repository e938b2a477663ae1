import DBus
import Simulator
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Timing

/// `blegate-bench simulator [--straps N] [--rate HZ] [--seconds S]`: the simulator
/// runs in a child process; this process connects to every strap through the
/// BlueZ API, subscribes, and counts what arrives. Prints the simulator's emit rate
/// and its CPU per notification (read from /proc for the child alone).
enum SimulatorBenchmarks {
    static func run(_ args: [String]) async throws {
        let straps = option(args, "--straps").flatMap(Int.init) ?? 10
        let rates = option(args, "--rate").map { $0.split(separator: ",").compactMap { Double($0) } } ?? [50, 3000]
        let seconds = option(args, "--seconds").flatMap(Double.init) ?? 10
        for rate in rates {
            try await measure(straps: straps, rate: rate, seconds: seconds)
        }
    }

    static func serve(_ args: [String]) async throws {
        guard let address = option(args, "--address") else { throw DBusError(.invalidArgs, "--address needed") }
        var config = SimulatorConfiguration()
        config.straps = option(args, "--straps").flatMap(Int.init) ?? 10
        config.rate = option(args, "--rate").flatMap(Double.init) ?? 50
        config.seed = 7
        let sim = try SimulatedBlueZ(configuration: config, bus: .address(address))
        try await sim.start()
        report("ready")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    static func measure(straps: Int, rate: Double, seconds: Double) async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let child = try spawnSelf(["simulator-serve", "--address", bus.address, "--straps", String(straps), "--rate", String(rate)])
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(child, &status, 0)
        }
        let c = try await DBusConnection.connect(bus.busAddress)
        defer { c.close() }
        while try await c.nameOwner(of: "org.bluez") == nil { try await Task.sleep(for: .milliseconds(50)) }
        let count = Atomic<Int>(0)
        _ = try await c.subscribeRaw(matching: DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")) { view in
            if view.withChangedBytes("Value", { $0.count }) != nil { count.add(1, ordering: .relaxed) }
        }
        let adapter: DBusObjectPath = "/org/bluez/hci0"
        try await c.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "StartDiscovery")
        var devices: [DBusObjectPath] = []
        while devices.count < straps {
            try await Task.sleep(for: .milliseconds(100))
            devices = try await objects(c).filter { $0.value["org.bluez.Device1"] != nil }.map(\.key)
        }
        try await c.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "StopDiscovery")
        for device in devices {
            try await c.call(destination: "org.bluez", path: device, interface: "org.bluez.Device1", member: "Connect", timeout: .seconds(30))
            var characteristic: DBusObjectPath?
            while characteristic == nil {
                characteristic = try await objects(c).first { path, ifaces in
                    path.isDescendant(of: device) && ifaces["org.bluez.GattCharacteristic1"]?["UUID"]?.stringValue == "00002a37-0000-1000-8000-00805f9b34fb"
                }?.key
                if characteristic == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            try await c.call(destination: "org.bluez", path: characteristic!, interface: "org.bluez.GattCharacteristic1", member: "StartNotify")
        }
        try await Task.sleep(for: .seconds(1))  // let every strap reach its pace
        let startCount = count.load(ordering: .relaxed)
        let startCPU = processCPU(child)
        let startWall = MonotonicClock.seconds()
        try await Task.sleep(for: .seconds(seconds))
        let emitted = count.load(ordering: .relaxed) - startCount
        let cpu = processCPU(child) - startCPU
        let wall = MonotonicClock.seconds() - startWall
        let offered = Double(straps) * rate
        report("simulator emit [\(straps) straps × \(fixed(rate, 0)) Hz = \(fixed(offered, 0))/s offered]: \(fixed(Double(emitted) / wall, 0)) notifications/s received, "
            + "simulator CPU \(fixed(cpu / Double(max(emitted, 1)) * 1e6, 2)) µs/notification (StartNotify path, child process)")
    }

    static func objects(_ c: DBusConnection) async throws -> [DBusObjectPath: [String: [String: DBusValue]]] {
        let reply = try await c.call(destination: "org.bluez", path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        var out: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
        for entry in reply.first?.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPathValue, let ifaces = entry.value.stringKeyedValue else { continue }
            out[path] = ifaces.compactMapValues { $0.stringKeyedValue }
        }
        return out
    }

    /// utime+stime of another process, from /proc/PID/stat.
    static func processCPU(_ pid: pid_t) -> Double {
        guard let f = fopen("/proc/\(pid)/stat", "r") else { return 0 }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard fgets(&buffer, Int32(buffer.count), f) != nil else { return 0 }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Fields after the ")" that ends the command name: state is field 3, utime 14, stime 15.
        guard let close = line.lastIndex(of: ")") else { return 0 }
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
