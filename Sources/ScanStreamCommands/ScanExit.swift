import ArgumentParser

/// `blegate scan` exit statuses: each names one thing a person can fix, so scripts
/// and systemd units can tell them apart (documented in docs/bluez-client.md).
enum ScanExit: Int32, Error {
    case ok = 0
    case busUnreachable = 2
    case bluetoothdNotRunning = 3
    case noAdapter = 4
    case poweredOff = 5
    case blocked = 6
    case discoveryFailed = 7
    /// `stream`: no --device matched any device within --find-timeout.
    case noMatch = 8
}

extension ScanExit {
    /// Ends the command with `status` (its message is already on stderr).
    static func leave(_ status: Int32) throws {
        if status != 0 { throw ExitCode(status) }
    }
}

/// A failure with the message to print on stderr.
struct ScanFailure: Error {
    let exit: ScanExit
    let message: String
}
