// SPDX-License-Identifier: MIT
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Loopback ports below the kernel's ephemeral range, for backends that go through outages.
///
/// A server that closes its listener for an outage must get the same port back. A port
/// taken with `bind(0)` comes from the ephemeral range, and once closed the kernel hands it
/// to the next `bind(0)` or outgoing connection in any process: in a parallel test run
/// another test's server took it mid-outage, and the client then talked to a stranger.
/// Ports below the range are never handed out that way; this process's backends also
/// keep out of each other's.
enum QuietPorts {
    private static let claimed = Mutex<Set<Int>>([])

    /// The kernel's ephemeral range (`ip_local_port_range`), or nil when it cannot be read.
    static func ephemeralRange() -> ClosedRange<Int>? {
        guard let f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r") else { return nil }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), f) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        guard numbers.count == 2, numbers[0] <= numbers[1] else { return nil }
        return numbers[0]...numbers[1]
    }

    /// Candidate ports in random order, claimed for this process (nil: none available,
    /// use port 0). A candidate may still be in use by another process; the caller tries
    /// the next one when binding fails.
    static func candidates(count: Int = 40) -> [Int]? {
        guard let range = ephemeralRange() else { return nil }
        let pool = 10_000..<min(range.lowerBound, 65_536)
        guard pool.count >= 1_000 else { return nil }
        return claimed.withLock { taken in
            var picked: [Int] = []
            while picked.count < count {
                let p = Int.random(in: pool)
                if taken.insert(p).inserted { picked.append(p) }
            }
            return picked
        }
    }
}
