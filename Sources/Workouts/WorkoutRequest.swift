// SPDX-License-Identifier: MIT

import Effort
import WearMetrics

/// Who, where and when: everything a workout needs besides the strap's records.
public struct WorkoutRequest: Sendable, Equatable {
    /// The contract's stable UUID, minted by the caller (gateway + strap + class key).
    public var id: String
    public var clientID: String?
    public var gatewayID: String
    public var deviceID: String
    public var workoutType: WorkoutType
    /// nil for open gym.
    public var className: String?
    /// The strap's name or model (`source_device`).
    public var sourceDevice: String
    /// The class window: records at or after `windowStart` and before `windowEnd` count.
    public var windowStart: UTCTimestamp
    public var windowEnd: UTCTimestamp
    public var profile: MemberProfile?
    /// The maximum heart rate when the profile gives neither a maximum nor an age.
    public var defaultMaxHR: Int

    public static let standardDefaultMaxHR = 185

    public init(id: String, clientID: String?, gatewayID: String, deviceID: String, workoutType: WorkoutType,
                className: String?, sourceDevice: String, windowStart: UTCTimestamp, windowEnd: UTCTimestamp,
                profile: MemberProfile? = nil, defaultMaxHR: Int = WorkoutRequest.standardDefaultMaxHR) {
        self.id = id
        self.clientID = clientID
        self.gatewayID = gatewayID
        self.deviceID = deviceID
        self.workoutType = workoutType
        self.className = className
        self.sourceDevice = sourceDevice
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.profile = profile
        self.defaultMaxHR = defaultMaxHR
    }
}
