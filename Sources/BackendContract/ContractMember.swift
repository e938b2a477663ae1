// SPDX-License-Identifier: MIT

/// A member as blegate-server answers `GET /api/v1/members` and `PUT /api/v1/members/{id}`:
/// display name, profile, and the straps assigned to them. Every key is always present,
/// null when unknown; the server writes it, the gateway reads it.
public struct ContractMember: Sendable, Equatable, Codable {
    public var clientID: String
    public var name: String
    public var age: Int?
    public var maxHR: Int?
    public var restingHR: Int?
    public var weightKg: Double?
    public var sex: String?
    /// Device addresses, upper case, whose latest pairing or assignment is this member.
    public var straps: [String]

    public init(clientID: String, name: String, age: Int? = nil, maxHR: Int? = nil, restingHR: Int? = nil, weightKg: Double? = nil,
                sex: String? = nil, straps: [String] = []) {
        self.clientID = clientID
        self.name = name
        self.age = age
        self.maxHR = maxHR
        self.restingHR = restingHR
        self.weightKg = weightKg
        self.sex = sex
        self.straps = straps
    }

    enum CodingKeys: String, CodingKey {
        case name, age, sex, straps
        case clientID = "client_id"
        case maxHR = "max_hr"
        case restingHR = "resting_hr"
        case weightKg = "weight_kg"
    }

    /// A missing name reads as the client id, missing straps as none: a member from an
    /// older server still shows.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        clientID = try c.decode(String.self, forKey: .clientID)
        name = try c.decodeIfPresent(String.self, forKey: .name) ?? clientID
        age = try c.decodeIfPresent(Int.self, forKey: .age)
        maxHR = try c.decodeIfPresent(Int.self, forKey: .maxHR)
        restingHR = try c.decodeIfPresent(Int.self, forKey: .restingHR)
        weightKg = try c.decodeIfPresent(Double.self, forKey: .weightKg)
        sex = try c.decodeIfPresent(String.self, forKey: .sex)
        straps = try c.decodeIfPresent([String].self, forKey: .straps) ?? []
    }

    /// Written out: the synthesized form leaves out nil members, and the contract has
    /// every key, null when unknown.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(name, forKey: .name)
        try c.encode(age, forKey: .age)
        try c.encode(maxHR, forKey: .maxHR)
        try c.encode(restingHR, forKey: .restingHR)
        try c.encode(weightKg, forKey: .weightKg)
        try c.encode(sex, forKey: .sex)
        try c.encode(straps, forKey: .straps)
    }
}
