// SPDX-License-Identifier: MIT

/// Where learned link limits live between runs, keyed by adapter address (an adapter's
/// hciN name changes with plug order; its address does not).
public protocol LinkLimitMemory: Sendable {
    func load() -> [String: Int]
    func save(_ limits: [String: Int])
}
