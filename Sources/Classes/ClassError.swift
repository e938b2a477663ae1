// SPDX-License-Identifier: MIT

/// Why a class command was refused, in words staff can act on.
public struct ClassError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case alreadyRunning = "already_running"
        case noneRunning = "none_running"
        case badName = "bad_name"
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
