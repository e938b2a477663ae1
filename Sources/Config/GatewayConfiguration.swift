// SPDX-License-Identifier: MIT
import Classes

/// The gateway's configuration (`/etc/blegate/blegate.toml`), every key with its default.
///
/// Built only through `parse(toml:)`/`load(path:)`, which validate every value, or with
/// the defaults (`GatewayConfiguration()`), so a value held here is always a sane one.
public struct GatewayConfiguration: Sendable, Equatable {
    public static let defaultPath = "/etc/blegate/blegate.toml"

    public var gateway = Gateway()
    public var bluetooth = Bluetooth()
    public var hrv = HRV()
    public var cache = Cache()
    public var backend = Backend()
    public var status = Status()
    public var display = Display()
    public var coach = Coach()
    public var metrics = Metrics()
    /// `[members."<address or client id>"]`: names and profiles for the wall.
    public var members: [String: Member] = [:]
    public var workouts = Workouts()
    public var effort = Effort()
    /// `[[classes]]`: the timetable.
    public var classes: [ScheduledClass] = []

    public init() {}

    public struct Gateway: Sendable, Equatable {
        /// Sent to the backend as `gateway_id`.
        public var id: String = hostName()
        /// Holds the cache database.
        public var stateDirectory = "/var/lib/blegate"
        public init() {}
    }

    public enum ConnectPolicy: String, Sendable, Equatable, CaseIterable {
        /// Every heart-rate strap or watch seen (minus `deny`).
        case auto
        /// Only devices matching `allow`.
        case list
    }

    public enum NotifyMethod: String, Sendable, Equatable, CaseIterable {
        /// `AcquireNotify`: notifications on a socket, not through D-Bus (default).
        case acquire
        /// `StartNotify`: notifications as `PropertiesChanged` signals.
        case start
    }

    public struct Bluetooth: Sendable, Equatable {
        /// Empty = every adapter.
        public var adapters: [String] = []
        public var connect: ConnectPolicy = .auto
        /// Addresses (`A0:9E:1A:12:34:56`) or name patterns (`Polar H10*`).
        public var allow: [DevicePattern] = []
        public var deny: [DevicePattern] = []
        /// Most links per adapter (`max_links`): an upper bound; the real limit of each
        /// adapter is learned from where its connects are refused.
        public var maxLinks = 32
        /// `max_links` per adapter name (hci0) or address, overriding `maxLinks`.
        public var maxLinksByAdapter: [String: Int] = [:]
        /// Who gets a link first among equals (after straps that cannot be heard by
        /// advertisement, and paired members).
        public var priority: [DevicePattern] = []
        public var notify: NotifyMethod = .acquire
        /// HCI reset as a last resort (needs CAP_NET_ADMIN).
        public var adapterReset = false
        /// Once every followed strap streams over its link, scanning runs `scanBurst` in
        /// every `scanEvery` (zero: all the time), to find a strap that walks in.
        public var scanBurst: Duration = .seconds(3)
        public var scanEvery: Duration = .seconds(10)
        public init() {}
    }

    public struct HRV: Sendable, Equatable {
        public var windows: [Duration] = [.seconds(60), .seconds(300)]
        public init() {}
    }

    public struct Cache: Sendable, Equatable {
        /// Relative to `gateway.state_directory` unless absolute.
        public var file = "cache.sqlite"
        /// Delivered records older than this are deleted.
        public var retention: Duration = .seconds(7 * 86_400)
        /// Oldest delivered records are deleted while the database is larger than this.
        public var maxSize: Int64 = 512 * 1_048_576
        /// Lets retention delete undelivered records too (data loss).
        public var deleteUnsynced = false
        /// nil = payloads stored in clear.
        public var encryptionKeyFile: String?
        public init() {}
    }

    public enum Sink: String, Sendable, Equatable, CaseIterable {
        /// `POST /api/v1/metrics` with WearMetrics records.
        case wearmetrics
        /// `POST {samples_path}` with HealthKit-style samples.
        case samples
    }

    public enum UnpairedPolicy: String, Sendable, Equatable, CaseIterable {
        /// Sync unpaired devices' records with a null client_id.
        case send
        /// Keep them until the device is paired; pairing assigns them the member.
        case hold
    }

    public struct Backend: Sendable, Equatable {
        /// nil = cache only, no sync.
        public var url: String?
        /// Bearer token file (mode 0600); nil = no Authorization header.
        public var tokenFile: String? = "/etc/blegate/token"
        public var sink: Sink = .wearmetrics
        public var samplesPath = "/api/v1/samples"
        public var batchSize = 500
        /// How often to look for pending records when idle.
        public var interval: Duration = .seconds(5)
        public var unpaired: UnpairedPolicy = .send
        public init() {}
    }

    public struct Status: Sendable, Equatable {
        public var socket = "/run/blegate/status.sock"
        public init() {}
    }

    /// `[display]`: the wall, a live page of everyone's heart rate for the gym's screens.
    public struct Display: Sendable, Equatable {
        /// nil = no wall (`listen = ""`).
        public var listen: ListenAddress? = ListenAddress(host: "0.0.0.0", port: 8080)
        /// The gym's name, the header's title when no `room` is named.
        public var gymName: String?
        /// The room the wall is in, the header's title; nil = `gym_name`, else "Gym".
        public var room: String?
        /// Battery fraction (0 to 1) at or below which a tile shows the low-battery mark.
        public var lowBattery = 0.15
        public init() {}
    }

    /// `[coach]`: the coach page on the wall's listener (`/coach`), only with a PIN.
    public struct Coach: Sendable, Equatable {
        /// A file holding the coach PIN (4 to 32 characters, its first line); nil = no coach page.
        public var pinFile: String?
        public init() {}
    }

    /// `[metrics]`: `/metrics` for Prometheus, on a listener of its own (docs/metrics.md).
    public struct Metrics: Sendable, Equatable {
        /// nil = none (`listen = ""`).
        public var listen: ListenAddress? = ListenAddress(host: "0.0.0.0", port: 9464)
        public init() {}
    }

    /// `host:port` (`[::]:8080` for IPv6); port 0 = any free port.
    public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        public static func parse(_ text: String) -> ListenAddress? {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            var host = String(text[..<colon])
            guard let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else { return nil }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, !host.utf8.contains(UInt8(ascii: " ")), !host.utf8.contains(UInt8(ascii: "/")) else { return nil }
            return ListenAddress(host: host, port: port)
        }

        public var description: String { host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// `[workouts]`: how members' sessions become workouts.
    public struct Workouts: Sendable, Equatable {
        /// Outside a class, a member's workout ends after this much silence.
        public var idleClose: Duration = .seconds(600)
        /// Shorter workouts are not kept (someone walking past the gateway).
        public var minDuration: Duration = .seconds(120)
        /// The workout type of open-gym sessions.
        public var openGymType: ClassType = .other
        public init() {}
    }

    /// `[effort]`: what the effort maths assume when a member's profile is silent.
    public struct Effort: Sendable, Equatable {
        /// Max HR for zones when nothing better is known: an estimate, and marked as one.
        public var defaultMaxHR = 185
        public init() {}
    }

    public enum Sex: String, Sendable, Equatable, CaseIterable {
        case female, male
    }

    /// One member's display name and what the effort maths may know of them. Every key is
    /// optional; kcal need weight, age and sex.
    public struct Member: Sendable, Equatable {
        public var name: String?
        public var age: Int?
        public var maxHR: Int?
        public var restingHR: Int?
        public var weightKg: Double?
        public var sex: Sex?
        /// Addresses (upper case) of machines whose distance counts in the member's workouts.
        public var machines: [String] = []
        public init() {}
    }

    /// `cache.file` resolved against the state directory.
    public var cacheFilePath: String {
        cache.file.hasPrefix("/") ? cache.file : joinPath(gateway.stateDirectory, cache.file)
    }
}

/// An `allow`/`deny` entry: a Bluetooth address (matched case-insensitively) or a device
/// name pattern where `*` stands for any run of characters.
public enum DevicePattern: Sendable, Equatable, CustomStringConvertible {
    case address(String)
    case name(String)

    public init(_ text: String) {
        self = DevicePattern.isAddress(text) ? .address(text.uppercased()) : .name(text)
    }

    public static func isAddress(_ s: String) -> Bool {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    public func matches(address: String, name: String?) -> Bool {
        switch self {
        case let .address(a): return a == address.uppercased()
        case let .name(pattern):
            guard let name else { return false }
            return DevicePattern.wildcard(Array(pattern), Array(name))
        }
    }

    /// Glob match with `*` only (iterative, backtracking to the last star).
    static func wildcard(_ p: [Character], _ s: [Character]) -> Bool {
        var i = 0, j = 0, star = -1, mark = 0
        while j < s.count {
            if i < p.count, p[i] != "*", p[i] == s[j] { i += 1; j += 1 }
            else if i < p.count, p[i] == "*" { star = i; mark = j; i += 1 }
            else if star >= 0 { i = star + 1; mark += 1; j = mark }
            else { return false }
        }
        while i < p.count, p[i] == "*" { i += 1 }
        return i == p.count
    }

    public var description: String {
        switch self {
        case let .address(a): a
        case let .name(n): n
        }
    }
}

func joinPath(_ dir: String, _ file: String) -> String {
    dir.hasSuffix("/") ? dir + file : dir + "/" + file
}
