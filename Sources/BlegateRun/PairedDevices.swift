// SPDX-License-Identifier: MIT
import Synchronization

/// Addresses of straps that belong to a paired member, asked by link planning on every
/// plan (paired members get links before unknown straps), so kept in memory.
final class PairedDevices: Sendable {
    private let addresses = Mutex<Set<String>>([])

    func contains(_ address: String) -> Bool { addresses.withLock { $0.contains(address.uppercased()) } }
    func insert(_ address: String) { _ = addresses.withLock { $0.insert(address.uppercased()) } }
    func remove(_ address: String) { _ = addresses.withLock { $0.remove(address.uppercased()) } }
    func set(_ all: [String]) { addresses.withLock { $0 = Set(all.map { $0.uppercased() }) } }
}
