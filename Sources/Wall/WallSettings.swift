// SPDX-License-Identifier: MIT
import ClassSummary
import Effort

/// What the wall needs from the configuration, already validated (Config's `[display]`
/// and `[members]`, mapped by the gateway service).
public struct WallSettings: Sendable {
    public var host: String
    public var port: Int
    /// The header's title: the room's name (`[display] room`), else the gym's.
    public var gymName: String
    /// By Bluetooth address (upper case) or by member client id.
    public var members: [String: WallMember]
    /// Battery fraction at or below which a tile shows the low-battery mark.
    public var lowBattery: Double

    public init(host: String, port: Int, gymName: String, members: [String: WallMember] = [:], lowBattery: Double = 0.15) {
        self.host = host
        self.port = port
        self.gymName = gymName
        self.members = members
        self.lowBattery = lowBattery
    }
}

/// A member's display name and profile from the configuration.
public struct WallMember: Sendable, Equatable {
    public var name: String?
    public var profile: MemberProfile

    public init(name: String?, profile: MemberProfile) {
        self.name = name
        self.profile = profile
    }
}

/// What the device registry knows of a strap: its advertised name and, once paired, its
/// member. Only the name ever reaches the page.
public struct WallDirectoryEntry: Sendable, Equatable {
    public var address: String
    public var name: String?
    public var clientID: String?

    public init(address: String, name: String?, clientID: String?) {
        self.address = address
        self.name = name
        self.clientID = clientID
    }
}

/// One member's card in the summary shown when a class ends, from their workout and the
/// heart rates heard in the class.
public struct WallSummaryRow: Sendable, Equatable {
    public var device: String
    public var points: Double
    public var kcal: Double?
    /// Below zone 1, then zones 1 to 5.
    public var secondsInZone: [Int]
    /// Heart rates over the class (seconds since its start) for the curve.
    public var samples: [HeartRateCurve.Sample]
    public var workoutID: String?

    public init(device: String, points: Double, kcal: Double? = nil, secondsInZone: [Int], samples: [HeartRateCurve.Sample] = [],
                workoutID: String? = nil) {
        self.device = device.uppercased()
        self.points = points
        self.kcal = kcal
        self.secondsInZone = secondsInZone
        self.samples = samples
        self.workoutID = workoutID
    }
}

/// A strap the gateway hears but has no link for yet (and no heart rate from its
/// advertisements): the wall shows it waiting, with the reason `blegate status` gives.
public struct WallWaitingStrap: Sendable, Equatable {
    public var address: String
    public var reason: String

    public init(address: String, reason: String) {
        self.address = address.uppercased()
        self.reason = reason
    }
}
