// SPDX-License-Identifier: MIT

/// A configuration the gateway refuses to start with.
///
/// It always names the dotted key, says what is wrong and shows a right value, because
/// the person reading it is at a gym's Raspberry Pi with an editor open, not in the code.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of mistake, for callers and tests that branch on it.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case syntax, wrongType, outOfRange, unknownKey, badDuration, badSize, badValue
            case missingFile, unreadableFile, insecurePermissions
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file is not valid TOML.
        public static let syntax = Code(.syntax)
        /// A value of the wrong TOML type (a string where an integer belongs).
        public static let wrongType = Code(.wrongType)
        /// A number outside its allowed range.
        public static let outOfRange = Code(.outOfRange)
        /// A key or section the gateway does not know (a typo would otherwise do nothing).
        public static let unknownKey = Code(.unknownKey)
        /// A duration that cannot be read.
        public static let badDuration = Code(.badDuration)
        /// A size that cannot be read.
        public static let badSize = Code(.badSize)
        /// A string that is not one of the allowed values, or not of the allowed form.
        public static let badValue = Code(.badValue)
        /// The configuration file (or a file it names) does not exist.
        public static let missingFile = Code(.missingFile)
        /// A file exists but cannot be read, or its content is not of the expected form.
        public static let unreadableFile = Code(.unreadableFile)
        /// A secret file readable by others than its owner.
        public static let insecurePermissions = Code(.insecurePermissions)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// Dotted key (`backend.batch_size`); for file-level errors, the file's path.
    public var key: String
    /// What is wrong, including the offending value (`must be ..., got "many"`).
    public var problem: String
    /// A right value, written as it would appear in the file (`batch_size = 500`).
    public var example: String?

    public init(_ code: Code, key: String, problem: String, example: String? = nil) {
        self.code = code
        self.key = key
        self.problem = problem
        self.example = example
    }

    public var description: String {
        var s = "config error: \(key): \(problem)"
        if let example { s += ". Example: \(example)" }
        return s
    }
}
