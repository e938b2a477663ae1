// SPDX-License-Identifier: MIT

/// What a class is, in GymDashSync's workout types, so a workout keeps the class's kind.
public enum ClassType: String, Sendable, Equatable, CaseIterable, Codable {
    case run, walk, cycle, strength, hiit, other
}
