// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import NotifySocket
import Synchronization
import Testing
import Timing
#if canImport(Glibc)
import Glibc
#endif

/// The reader's gathering window changes while it runs (`setGather`): `blegate run`
/// narrows it while a wall screen watches and widens it when none does.
@Suite("AcquireNotify reader's window")
struct NotifySocketGatherTests {
    final class Deliveries: Sendable {
        let times = Mutex<[Int64]>([])
    }

    /// Sends `count` datagrams 10 ms apart; returns how long that took (s) and the
    /// distinct milliseconds at which the reader handed them over.
    static func pace(_ fd: Int32, count: Int, deliveries: Deliveries) async throws -> (seconds: Double, distinct: Int) {
        deliveries.times.withLock { $0 = [] }
        let began = MonotonicClock.seconds()
        for i in 0..<count {
            _ = [UInt8]([0x06, UInt8(truncatingIfNeeded: i)]).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            try await Task.sleep(for: .milliseconds(10))
        }
        let seconds = MonotonicClock.seconds() - began
        try await eventually("all \(count) datagrams delivered", seconds: 30) { deliveries.times.withLock { $0.count } >= count }
        return (seconds, Set(deliveries.times.withLock { $0 }).count)
    }

    @Test("widened, datagrams wait and come a window at a time; narrowed to nothing, each comes as it arrives")
    func changeWhileRunning() async throws {
        let reader = try NotifySocketReader(gather: .zero)
        defer { reader.stop() }
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        let deliveries = Deliveries()
        _ = reader.add(DBusFileDescriptor(owning: fds[0]), onData: { _ in
            let ms = Int64(MonotonicClock.nanoseconds() / 1_000_000)
            deliveries.times.withLock { $0.append(ms) }
        }, onHangup: {})
        let count = 150

        reader.setGather(.seconds(1))
        #expect(reader.gather == .seconds(1))
        let wide = try await Self.pace(fds[1], count: count, deliveries: deliveries)
        // A round a second, each handing over everything that gathered within a few ms
        // (one by one, 150 datagrams 10 ms apart come at 150 moments).
        #expect(wide.distinct <= 3 * (Int(wide.seconds) + 2) + 10, "\(wide.distinct) delivery moments over \(wide.seconds) s")

        reader.setGather(.zero)
        #expect(reader.gather == .zero)
        let narrow = try await Self.pace(fds[1], count: count, deliveries: deliveries)
        #expect(narrow.distinct >= count / 3, "\(narrow.distinct) delivery moments for \(count) datagrams 10 ms apart")
    }
}
