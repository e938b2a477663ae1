// SPDX-License-Identifier: MIT

/// What a class is, as the workout JSON names it; the exports map it to their own sports.
public enum WorkoutType: String, Sendable, Equatable, CaseIterable {
    case run, walk, cycle, strength, hiit, other
}
