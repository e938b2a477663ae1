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

/// The AcquireNotify reader on real SOCK_SEQPACKET socket pairs, as bluetoothd hands them out.
@Suite("AcquireNotify socket reader")
struct NotifySocketReaderTests {
    final class Collector: Sendable {
        let datagrams = Mutex<[[UInt8]]>([])
        let hungUp = Mutex(0)
    }

    func pair() throws -> (ours: DBusFileDescriptor, theirs: Int32) {
        var fds: [Int32] = [-1, -1]
        let rc = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        try #require(rc == 0)
        return (DBusFileDescriptor(owning: fds[0]), fds[1])
    }

    @Test("every datagram in order, empty ones included; hang-up once, after the data queued before it",
          arguments: [0, 8, 50, 200])
    func orderAndHangup(gatherMilliseconds: Int) async throws {
        let reader = try NotifySocketReader(gather: .milliseconds(gatherMilliseconds))
        defer { reader.stop() }
        let (ours, theirs) = try pair()
        let c = Collector()
        _ = reader.add(ours, onData: { b in c.datagrams.withLock { $0.append(Array(b)) } }, onHangup: { c.hungUp.withLock { $0 += 1 } })
        // Dense enough to gather (several sends in a row, some after a first delivery).
        let payloads: [[UInt8]] = [[0x16, 72, 0x10, 0x03], [], [0x06, 80], [0x00]] + (0..<40).map { [0x06, UInt8($0)] }
        for (i, p) in payloads.enumerated() {
            _ = p.withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) }
            if i % 10 == 9 { try? await Task.sleep(for: .milliseconds(1)) }
        }
        _ = await eventually(timeout: 60, every: .milliseconds(10)) { c.datagrams.withLock { $0.count } == payloads.count }
        #expect(c.datagrams.withLock { $0 } == payloads)
        #expect(c.hungUp.withLock { $0 } == 0, "an empty notification is not the end of the socket")
        // Queued right before the close, an empty one last: still delivered (the kernel's
        // arrival stamp tells an empty datagram from the end), then the hang-up.
        _ = [UInt8]([0x06, 81]).withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) }
        _ = send(theirs, UnsafeRawPointer(bitPattern: 1), 0, 0)
        close(theirs)
        _ = await eventually(timeout: 60, every: .milliseconds(10)) { c.hungUp.withLock { $0 } == 1 }
        #expect(c.hungUp.withLock { $0 } == 1)
        #expect(c.datagrams.withLock { Array($0.suffix(2)) } == [[0x06, 81], []])
        #expect(reader.datagramCount == payloads.count + 2)
    }

    @Test("every round that delivered ends with onRoundEnd, after its datagrams and before the next round's")
    func roundEnds() async throws {
        // Per round end: how many datagrams had been delivered by then.
        let ends = Mutex<[Int]>([])
        let c = Collector()
        let reader = try NotifySocketReader(gather: .milliseconds(100), onRoundEnd: {
            let n = c.datagrams.withLock { $0.count }
            ends.withLock { $0.append(n) }
        })
        defer { reader.stop() }
        var theirs: [Int32] = []
        defer { for fd in theirs { close(fd) } }
        // Three sockets with ten datagrams queued on each before the reader sees them: at
        // most a round each (a socket's queue is read in one batch).
        for s in 0..<3 {
            let (ours, other) = try pair()
            theirs.append(other)
            for i in 0..<10 {
                _ = [0x06, UInt8(s), UInt8(i)].withUnsafeBytes { send(other, $0.baseAddress, $0.count, 0) }
            }
            _ = reader.add(ours, onData: { b in c.datagrams.withLock { $0.append(Array(b)) } }, onHangup: {})
        }
        try await eventually("30 datagrams handed over", seconds: 60, every: .milliseconds(10)) { ends.withLock { $0.last } == 30 }
        let first = ends.withLock { $0 }
        #expect(first.count <= 3, "round ends: \(first)")
        #expect(first == first.sorted() && Set(first).count == first.count, "a round end without new datagrams: \(first)")
        // A later lone datagram is its own round, ended once.
        _ = [UInt8]([0x06, 9, 9]).withUnsafeBytes { send(theirs[1], $0.baseAddress, $0.count, 0) }
        try await eventually("the lone datagram handed over", seconds: 60, every: .milliseconds(10)) { ends.withLock { $0.last } == 31 }
        #expect(ends.withLock { $0.count } == first.count + 1)
    }

    @Test("a datagram queued before its socket was added, which the kernel stamps when read, takes the stamp of the next one read with it")
    func unstampedTakesNextStamp() async throws {
        let reader = try NotifySocketReader(gather: .zero)
        defer { reader.stop() }
        // Socket X holds the reader thread in a handler while socket S gets one datagram
        // before `add` (no stamp) and one after it (stamped), so both are read in one batch.
        let entered = Mutex(false), released = Atomic<Bool>(false)
        let (x, xOther) = try pair()
        defer { close(xOther) }
        _ = reader.add(x, onData: { _ in
            entered.withLock { $0 = true }
            while !released.load(ordering: .acquiring) { usleep(1000) }
        }, onHangup: {})
        _ = [UInt8]([0x06, 1]).withUnsafeBytes { send(xOther, $0.baseAddress, $0.count, 0) }
        try await eventually("the reader held in X's handler", seconds: 60, every: .milliseconds(5)) { entered.withLock { $0 } }

        let (ours, theirs) = try pair()
        defer { close(theirs) }
        let got = Mutex<[(bytes: [UInt8], arrival: Int64)]>([])
        _ = [UInt8]([0x06, 70]).withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) }
        _ = reader.add(ours, onArrival: { b, t in got.withLock { $0.append((Array(b), t)) } }, onHangup: {})
        let before = WallClock.nanoseconds()
        _ = [UInt8]([0x06, 71]).withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) }
        let after = WallClock.nanoseconds()
        try await Task.sleep(for: .milliseconds(300))
        released.store(true, ordering: .releasing)
        try await eventually("both datagrams", seconds: 60, every: .milliseconds(10)) { got.withLock { $0.count } == 2 }

        let both = got.withLock { $0 }
        #expect(both.map(\.bytes) == [[0x06, 70], [0x06, 71]])
        // The second was stamped by the kernel as it was sent; the first, stamped by the
        // kernel as it was read (300 ms later), gets the second's stamp.
        #expect(both[1].arrival >= before && both[1].arrival <= after, "stamp \(both[1].arrival) outside \(before)...\(after)")
        #expect(both[0].arrival == both[1].arrival)
    }

    @Test("a burst of 5,000 datagrams, far more than a socket buffer holds, arrives whole and in order through a 200 ms window")
    func burst() async throws {
        let reader = try NotifySocketReader(gather: .milliseconds(200))
        defer { reader.stop() }
        let (ours, theirs) = try pair()
        defer { close(theirs) }
        let c = Collector()
        _ = reader.add(ours, onData: { b in c.datagrams.withLock { $0.append(Array(b)) } }, onHangup: { c.hungUp.withLock { $0 += 1 } })
        let count = 5000
        // The sender retries a datagram the full buffer refused, so what arrives shows the
        // reader drained every datagram, in order, while gathering.
        for i in 0..<count {
            let p: [UInt8] = [0x06, UInt8(i & 0xFF), UInt8(i >> 8)]
            while p.withUnsafeBytes({ send(theirs, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) < 0 {
                try #require(errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS, "send failed (errno \(errno))")
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        _ = await eventually(timeout: 60, every: .milliseconds(10)) { c.datagrams.withLock { $0.count } >= count }
        let got = c.datagrams.withLock { $0 }
        #expect(got.count == count)
        #expect(got.enumerated().allSatisfy { i, p in p == [0x06, UInt8(i & 0xFF), UInt8(i >> 8)] })
    }

    @Test("a removed socket delivers what was queued on it, then is closed and reports nothing more")
    func remove() async throws {
        let reader = try NotifySocketReader(gather: .milliseconds(200))
        defer { reader.stop() }
        let (ours, theirs) = try pair()
        defer { close(theirs) }
        let c = Collector()
        let registration = reader.add(ours, onData: { b in c.datagrams.withLock { $0.append(Array(b)) } },
                                      onHangup: { c.hungUp.withLock { $0 += 1 } })
        let r = try #require(registration)
        let (other, otherPeer) = try pair()
        defer { close(otherPeer) }
        let others = Mutex(0)
        #expect(reader.add(other, onData: { _ in others.withLock { $0 += 1 } }, onHangup: {}) != nil)
        // Dense traffic, so the reader gathers (sleeps up to 200 ms after each round).
        // One of the last is empty (a malformed notification): still delivered, not taken
        // for the end of the socket.
        let payloads: [[UInt8]] = (0..<15).map { $0 == 12 ? [] : [0x06, UInt8(60 + $0)] }
        for p in payloads.prefix(10) {
            #expect(p.withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) } == p.count)
            try? await Task.sleep(for: .milliseconds(2))
        }
        _ = await eventually(timeout: 60, every: .milliseconds(10)) { c.datagrams.withLock { $0.count } == 10 }
        // A round for the other socket only: this socket, found empty, leaves epoll's ready
        // list, and the reader is asleep again when the rest happens.
        #expect([UInt8]([0x06, 1]).withUnsafeBytes { send(otherPeer, $0.baseAddress, $0.count, 0) } == 2)
        _ = await eventually(timeout: 60, every: .milliseconds(10)) { others.withLock { $0 } == 1 }
        // A command first (a third socket added), then the last datagrams, then the
        // removal: the next round takes the commands before it reads this socket.
        let (third, thirdPeer) = try pair()
        defer { close(thirdPeer) }
        #expect(reader.add(third, onData: { _ in }, onHangup: {}) != nil)
        for p in payloads.suffix(5) {
            #expect(p.withUnsafeBytes { send(theirs, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), $0.count, 0) } == p.count)
        }
        await reader.remove(r)
        #expect(c.datagrams.withLock { $0 } == payloads, "sent before the removal: every one delivered, in order")
        // Our end closed: a send from bluetoothd's side now fails with EPIPE or ECONNRESET.
        let failed = [UInt8]([1]).withUnsafeBytes { send(theirs, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) } < 0
        #expect(failed)
        #expect(c.hungUp.withLock { $0 } == 0)
        #expect(c.datagrams.withLock { $0.count } == payloads.count, "nothing after the removal")
    }

    @Test("a removal after the reader stopped returns at once", .timeLimit(.minutes(1)))
    func removeAfterStop() async throws {
        let reader = try NotifySocketReader()
        let (ours, theirs) = try pair()
        defer { close(theirs) }
        let registration = reader.add(ours, onData: { _ in }, onHangup: {})
        let r = try #require(registration)
        reader.stop()
        await reader.remove(r)
    }

    @Test("the watchdog's probe: an idle reader answers, one stuck in a handler is reported, and answers again once it goes on",
          .timeLimit(.minutes(1)))
    func stall() async throws {
        let reader = try NotifySocketReader(gather: .zero)
        defer { reader.stop() }
        let (ours, theirs) = try pair()
        defer { close(theirs) }
        let held = Mutex(true)
        let entered = Mutex(false)
        _ = reader.add(ours, onData: { _ in
            entered.withLock { $0 = true }
            // A handler that does not return: the reader thread is stuck in its round.
            while held.withLock({ $0 }) { usleep(1000) }
        }, onHangup: {})
        let within = Duration.milliseconds(100)
        #expect(reader.stall(within: within) == nil, "waiting in epoll: answers")
        #expect([UInt8]([0x06, 72]).withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) } == 2)
        #expect(await eventually(timeout: 60, every: .milliseconds(10)) { entered.withLock { $0 } })
        var problem: String?
        #expect(await eventually(timeout: 60, every: .milliseconds(10)) {
            problem = reader.stall(within: within)
            return problem != nil
        })
        #expect(problem?.hasPrefix("a round of reading under way for ") == true, "\(problem ?? "nil")")
        held.withLock { $0 = false }
        #expect(await eventually(timeout: 60, every: .milliseconds(10)) { reader.stall(within: within) == nil })
        #expect(reader.datagramCount == 1)
    }
}
