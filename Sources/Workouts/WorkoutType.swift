// SPDX-License-Identifier: MIT
import Classes

/// What a workout is: its class's type (GymDashSync's workout types); the exports map it
/// to their own sports.
public typealias WorkoutType = ClassType
