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

    public init() {}
}
