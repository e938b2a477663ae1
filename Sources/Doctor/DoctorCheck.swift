// SPDX-License-Identifier: MIT

/// How a check came out. Only `fail` makes `blegate doctor` exit non-zero: a warning
/// is something that works now but will bite (a 2.4 GHz Wi-Fi next to the built-in
/// radio), a failure is something that stops heart rates reaching the backend.
public enum CheckStatus: String, Sendable, Hashable, Comparable {
    case ok, warn, fail

    private var rank: Int {
        switch self {
        case .ok: 0
        case .warn: 1
        case .fail: 2
        }
    }

    public static func < (a: CheckStatus, b: CheckStatus) -> Bool { a.rank < b.rank }
}

/// One finding: what was looked at, what was seen, and, unless it is fine, the change
/// to make, written for the gym's owner (a command to paste, a line to edit).
public struct DoctorCheck: Sendable, Hashable {
    /// Short and stable (`bluetoothd`, `adapter hci0`, `main.conf [GATT] Cache`): scripts match on it.
    public var name: String
    public var status: CheckStatus
    public var message: String
    public var fix: String?

    public init(_ name: String, _ status: CheckStatus, _ message: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.message = message
        self.fix = fix
    }

    public static func ok(_ name: String, _ message: String) -> DoctorCheck { DoctorCheck(name, .ok, message) }
    public static func warn(_ name: String, _ message: String, fix: String?) -> DoctorCheck { DoctorCheck(name, .warn, message, fix: fix) }
    public static func fail(_ name: String, _ message: String, fix: String?) -> DoctorCheck { DoctorCheck(name, .fail, message, fix: fix) }
}
