// SPDX-License-Identifier: MIT

/// One class as it runs or ran: what the workouts of its members are computed over.
///
/// Times are Unix milliseconds, the unit of the records' timestamps, so a class window
/// selects records without conversion.
public struct ClassSession: Sendable, Equatable, Codable {
    public enum Origin: String, Sendable, Codable {
        /// Started and stopped by staff (`blegate class start`).
        case manual
        /// From a `[[classes]]` entry of the configuration.
        case scheduled
        /// One member's session outside any class.
        case openGym = "open_gym"
    }

    /// Identifies the class among all the gateway's classes; workout ids derive from it,
    /// so the same class always yields the same workout ids.
    public var key: String
    public var name: String?
    public var type: ClassType
    public var origin: Origin
    public var startMs: Int64
    /// nil while running.
    public var endMs: Int64?
    /// A scheduled class ends by itself at this time.
    public var plannedEndMs: Int64?
    /// The one strap an open-gym session is about; nil for a class (every strap heard).
    public var device: String?
    /// A class started by hand with a planned length (the coach page): shown with its
    /// timer, it does not end the class (a coach may run over).
    public var plannedSeconds: Int?

    public init(key: String, name: String?, type: ClassType, origin: Origin, startMs: Int64, endMs: Int64? = nil, plannedEndMs: Int64? = nil,
                device: String? = nil) {
        self.key = key
        self.name = name
        self.type = type
        self.origin = origin
        self.startMs = startMs
        self.endMs = endMs
        self.plannedEndMs = plannedEndMs
        self.device = device
    }

    public var isRunning: Bool { endMs == nil }
}
