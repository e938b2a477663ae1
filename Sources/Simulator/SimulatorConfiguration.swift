/// Everything `blegate simulate` can be told; tests build one directly.
public struct SimulatorConfiguration: Sendable {
    /// bluetoothd's `[GATT] Cache` setting.
    public enum GattCache: String, Sendable, CaseIterable {
        /// Objects survive a disconnect; notification sessions resume on reconnect.
        case always
        /// Service objects go with the connection and are rebuilt on the next one.
        case no
    }

    public var adapters = 1
    public var straps = 5
    public var watches = 0
    /// Scales (`DeviceModel.scale`): silent until a test steps on one.
    public var scales = 0
    /// How long a scale stepped on advertises when no central takes its reading, s.
    public var scaleAwake = 30.0
    public var seed: UInt64 = 1
    /// Heart Rate notifications per second per device.
    public var rate = 1.0
    public var gattCache = GattCache.always
    public var payloadLogPath: String?
    /// Probability that a Connect fails with le-connection-abort-by-local.
    public var connectFailRate = 0.0
    /// The next N Connect attempts (any device) fail.
    public var connectFailNext = 0
    /// Fraction of Heart Rate notifications replaced by malformed payloads.
    public var malformedRate = 0.0
    /// Drop the link of one connected device every S seconds (nil: never).
    public var linkLossEvery: Double?
    /// BlueZ's TemporaryTimeout: unconnected devices not seen for this long go away.
    public var temporaryTimeout = 30.0
    /// How long a Connect to a device that does not advertise waits before failing.
    public var connectTimeout = 8.0
    /// Delay between the connection and ServicesResolved (service discovery), ms.
    public var serviceDiscoveryDelay: ClosedRange<Double> = 30...150
    /// Mean interval between advertising reports of one device while discovering, s.
    public var advertisingInterval = 1.0
    /// Delay before the restarted daemon takes the name again, s.
    public var restartDelay = 1.0
    /// LE links each adapter's controller can hold (index = adapter; missing or 0:
    /// no limit). The gateway is not told these; it learns them from refusals.
    public var linkLimits: [Int] = []
    /// How many of the straps carry heart rate in their advertisements (Polar H10 or
    /// the broadcast-only model); nil keeps the classic room (`DeviceModel.straps`
    /// in turn) with strap clocks that advance only while they notify.
    public var advertising: Int?
    /// How many of the `advertising` straps can only be heard, never connected.
    public var advertisingOnly = 0
    /// Scheduled USB unplugs, timed from `start()`.
    public var unplugs: [AdapterUnplug] = []
    /// What every device says instead of its model's, for tests of hostile devices: its
    /// name (advertised and in BlueZ's `Name`) and Device Information strings (16-bit
    /// characteristic UUID → the value's bytes, sent as they are).
    public var name: String?
    public var deviceInformation: [UInt16: [UInt8]] = [:]
    /// Devices (by index) that refuse AcquireNotify with NotSupported, as some BlueZ
    /// builds do: a client falls back to StartNotify for them, so one room can exercise
    /// both notification paths.
    public var startNotifyOnly: Set<Int> = []

    public init() {}
}

/// One scheduled unplug: `adapter` vanishes `at` seconds after start and comes back
/// `duration` seconds later (never, when `duration` is 0).
public struct AdapterUnplug: Sendable, Hashable, CustomStringConvertible {
    public var adapter: Int
    public var at: Double
    public var duration: Double

    public init(adapter: Int, at: Double, for duration: Double) {
        self.adapter = adapter
        self.at = at
        self.duration = duration
    }

    /// `ADAPTER@AT+FOR` in seconds, as `--unplug 1@60+60` spells it; `1@60` never returns.
    public init(parsing text: String) throws(SimulatorError) {
        let bad = SimulatorError("--unplug wants ADAPTER@AT+FOR in seconds (e.g. 1@60+60), not '\(text)'")
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let adapter = Int(parts[0]), adapter >= 0 else { throw bad }
        let times = parts[1].split(separator: "+", omittingEmptySubsequences: false)
        guard (1...2).contains(times.count), let at = Double(times[0]), at.isFinite, at >= 0 else { throw bad }
        var duration = 0.0
        if times.count == 2 {
            guard let d = Double(times[1]), d.isFinite, d > 0 else { throw bad }
            duration = d
        }
        self.init(adapter: adapter, at: at, for: duration)
    }

    public var description: String { duration > 0 ? "\(adapter)@\(at)+\(duration)" : "\(adapter)@\(at)" }
}

extension SimulatorConfiguration {
    /// `--link-limits 4,7`: one limit per adapter, in adapter order; 0 means none.
    public static func parseLinkLimits(_ text: String) throws(SimulatorError) -> [Int] {
        var out: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let n = Int(item.trimmingSpaces()), n >= 0 else {
                throw SimulatorError("--link-limits wants comma-separated counts (e.g. 4,7; 0 = no limit), not '\(text)'")
            }
            out.append(n)
        }
        return out
    }

    /// The configuration's own contradictions, as the CLI reports them.
    public func validate() throws(SimulatorError) {
        guard adapters >= 0, adapters <= 16 else { throw SimulatorError("--adapters must be 0...16") }
        guard rate > 0, rate <= 100_000 else { throw SimulatorError("--rate must be in (0, 100000]") }
        guard straps >= 0, watches >= 0, scales >= 0 else { throw SimulatorError("--straps, --watches and --scales must not be negative") }
        guard linkLimits.allSatisfy({ $0 >= 0 }) else { throw SimulatorError("--link-limits must not be negative") }
        if let advertising {
            guard (0...straps).contains(advertising) else {
                throw SimulatorError("--advertising \(advertising) must be within 0...\(straps) (the number of straps)")
            }
            guard (0...advertising).contains(advertisingOnly) else {
                throw SimulatorError("--advertising-only \(advertisingOnly) must be within 0...\(advertising) (--advertising)")
            }
        } else if advertisingOnly != 0 {
            throw SimulatorError("--advertising-only needs --advertising")
        }
        for u in unplugs {
            guard (0..<adapters).contains(u.adapter) else {
                throw SimulatorError("--unplug \(u): there is no adapter \(u.adapter) (--adapters \(adapters))")
            }
            guard u.at >= 0, u.duration >= 0, u.at.isFinite, u.duration.isFinite else {
                throw SimulatorError("--unplug \(u): times must be finite and not negative")
            }
        }
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}
