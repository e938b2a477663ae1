// SPDX-License-Identifier: MIT
import Effort

/// What the wall needs from the configuration, already validated (Config's `[display]`
/// and `[members]`, mapped by the gateway service).
public struct WallSettings: Sendable {
    public var host: String
    public var port: Int
    /// Shown in the header.
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

/// One member's line in the summary shown when a class ends, from their workout.
public struct WallSummaryRow: Sendable, Equatable {
    public var device: String
    public var points: Double
    /// Below zone 1, then zones 1 to 5.
    public var secondsInZone: [Int]

    public init(device: String, points: Double, secondsInZone: [Int]) {
        self.device = device.uppercased()
        self.points = points
        self.secondsInZone = secondsInZone
    }
}
