// SPDX-License-Identifier: MIT

/// Why `blegate run` cannot start. `isConfiguration` errors exit 78 (EX_CONFIG), so
/// systemd's log shows a config mistake as such.
public struct RuntimeError: Error, Sendable, CustomStringConvertible {
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable { case configuration, cache, statusSocket }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The config file, or a file it names, is wrong.
        public static let configuration = Kind(.configuration)
        /// The cache database cannot be opened.
        public static let cache = Kind(.cache)
        /// The status socket cannot be bound (or another gateway answers on it).
        public static let statusSocket = Kind(.statusSocket)

        public var description: String { base.rawValue }
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var isConfiguration: Bool { kind == .configuration }
    public var description: String { message }
}
