// SPDX-License-Identifier: MIT

/// What the coach page can see and do in the gateway; `blegate run` implements it over
/// its class keeper, strap links, cache and backend. Values, not JSON: the page's JSON is
/// made from them at the edge (`CoachRoutes`).
public protocol CoachActions: Sendable {
    func state() async -> CoachState
    func startClass(name: String, type: String, plannedMinutes: Int?) async throws(CoachFailure)
    func stopClass() async throws(CoachFailure)
    /// Ties a strap to a member picked from the backend's (or configuration's) list.
    func assign(address: String, clientID: String) async throws(CoachFailure)
    /// Ties a strap to the member whose pairing code this is (exchanged at the backend).
    func pair(address: String, code: String) async throws(CoachFailure)
    func unassign(address: String) async throws(CoachFailure)
    func saveProfile(clientID: String, _ profile: CoachProfile) async throws(CoachFailure)
    /// The last class's summary with each workout's delivery, as HTML; nil before any.
    func summaryHTML() async -> String?
}

/// Why an action did not happen, in words for the coach.
public struct CoachFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// 400 for what the coach can fix, 409 for a state that forbids it, 502 when the
    /// backend could not be reached or refused.
    public var status: Int

    public init(_ message: String, status: Int = 400) {
        self.message = message
        self.status = status
    }

    public var description: String { message }
}

/// The profile fields the coach page edits.
public struct CoachProfile: Sendable, Equatable {
    public var age: Int?
    public var maxHR: Int?
    public var weightKg: Double?

    public init(age: Int? = nil, maxHR: Int? = nil, weightKg: Double? = nil) {
        self.age = age
        self.maxHR = maxHR
        self.weightKg = weightKg
    }
}

/// Everything the page draws, every 2 s.
public struct CoachState: Sendable, Equatable, Encodable {
    public struct RunningClass: Sendable, Equatable, Encodable {
        public var name: String
        public var type: String
        public var elapsed: Int64
        public var length: Int?

        public init(name: String, type: String, elapsed: Int64, length: Int?) {
            self.name = name
            self.type = type
            self.elapsed = elapsed
            self.length = length
        }
    }

    public struct Member: Sendable, Equatable, Encodable {
        public var clientID: String
        public var name: String
        public var age: Int?
        public var maxHR: Int?
        public var weightKg: Double?

        public init(clientID: String, name: String, age: Int? = nil, maxHR: Int? = nil, weightKg: Double? = nil) {
            self.clientID = clientID
            self.name = name
            self.age = age
            self.maxHR = maxHR
            self.weightKg = weightKg
        }

        enum CodingKeys: String, CodingKey { case clientID = "client_id", name, age, maxHR = "max_hr", weightKg = "weight_kg" }
    }

    public struct Strap: Sendable, Equatable, Encodable {
        public var address: String
        public var name: String
        /// `blegate status`'s state: streaming, advertised, waiting-for-link, connecting …
        public var state: String
        public var reason: String?
        public var hr: Int?
        public var battery: Int?
        public var member: Member?

        public init(address: String, name: String, state: String, reason: String? = nil, hr: Int? = nil, battery: Int? = nil,
                    member: Member? = nil) {
            self.address = address
            self.name = name
            self.state = state
            self.reason = reason
            self.hr = hr
            self.battery = battery
            self.member = member
        }
    }

    public var room: String
    public var classTypes: [String]
    public var running: RunningClass?
    public var straps: [Strap]
    public var members: [Member]
    /// Where members come from: "server" (blegate-server), "config" (`[members]`).
    public var membersSource: String
    /// Changes when a new summary is ready.
    public var summaryNumber: Int
    /// Why the member list may be stale (the backend unreachable), if it is.
    public var membersProblem: String?

    public init(room: String, classTypes: [String], running: RunningClass?, straps: [Strap], members: [Member], membersSource: String,
                summaryNumber: Int, membersProblem: String? = nil) {
        self.room = room
        self.classTypes = classTypes
        self.running = running
        self.straps = straps
        self.members = members
        self.membersSource = membersSource
        self.summaryNumber = summaryNumber
        self.membersProblem = membersProblem
    }

    enum CodingKeys: String, CodingKey {
        case room, classTypes = "class_types", running, straps, members, membersSource = "members_source",
             summaryNumber = "summary_number", membersProblem = "members_problem"
    }
}
