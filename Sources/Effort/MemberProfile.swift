// SPDX-License-Identifier: MIT

/// What the maths may know about a member. Every field is optional: each formula says
/// which ones it needs and gives no answer rather than a guess when one is missing.
public struct MemberProfile: Sendable, Equatable {
    public enum Sex: String, Sendable, Equatable, CaseIterable {
        case female, male
    }

    public var age: Int?
    /// A measured or configured maximum; wins over the age estimate.
    public var maxHR: Int?
    public var restingHR: Int?
    public var weightKg: Double?
    public var sex: Sex?

    public init(age: Int? = nil, maxHR: Int? = nil, restingHR: Int? = nil, weightKg: Double? = nil, sex: Sex? = nil) {
        self.age = age
        self.maxHR = maxHR
        self.restingHR = restingHR
        self.weightKg = weightKg
        self.sex = sex
    }
}
