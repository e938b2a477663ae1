import CLinux
import DBus
import Synchronization
import SystemSupport
import Timing
#if canImport(Glibc)
import Glibc
#endif

/// Reads the sockets that `GattCharacteristic1.AcquireNotify` hands out, all of them on
/// one thread with epoll.
///
/// Each datagram on such a socket is one notification, and no D-Bus message is involved:
/// this is the cheapest way a BlueZ client can receive GATT values. One thread serves every
/// strap; its handlers run on that thread and must not block (decode, hand over, return).
/// A socket that hangs up (link lost, bluetoothd restarted, the characteristic released)
/// is closed here and reported once through `onHangup`, after every datagram still queued
/// on it has been delivered.
///
/// Every datagram comes with the time the kernel queued it (SO_TIMESTAMPNS), so a reader
/// that lets datagrams gather before it reads them still knows when each arrived.
public final class NotifySocketReader: Sendable {
    /// Identifies one added socket.
    public struct Registration: Sendable, Hashable {
        public let id: UInt64
    }

    struct Entry {
        let fd: Int32
        let onData: @Sendable (UnsafeRawBufferPointer, _ arrival: Int64) -> Void
        /// The kernel stamps each datagram (SO_TIMESTAMPNS took): a zero-length read with a
        /// stamp is an empty notification, one without is the end of the socket.
        var stamped = false
        let onHangup: @Sendable () -> Void
    }

    enum Command {
        case add(UInt64, Entry)
        case remove(UInt64, done: @Sendable () -> Void)
    }

    struct Shared {
        var commands: [Command] = []
        var nextID: UInt64 = 1
        var stopped = false
    }

    /// The longest a datagram waits for the reader once traffic is dense (see `init`).
    /// The window now in force (see `init`; `setGather` changes it).
    public var gather: Duration { .nanoseconds(gatherNanoseconds.load(ordering: .relaxed)) }
    private let gatherNanoseconds: Atomic<Int64>

    private let onRoundEnd: (@Sendable () -> Void)?
    private let epollFD: Int32
    private let wakeFD: Int32
    private let shared = Mutex(Shared())
    private let datagrams = Atomic<Int>(0)
    /// For the watchdog: when (monotonic ns) the round under way began, 0 while the thread
    /// waits in epoll, `Self.ended` once it has ended on an error (not on `stop()`).
    private let roundBegan = Atomic<Int64>(0)
    private static let ended: Int64 = -1

    /// Starts the reader thread.
    ///
    /// `gather`: when a round begins within two windows of the previous one, the reader
    /// lets datagrams gather until this long after the round began before it waits
    /// again. Real straps notify independently, so without this every notification pays a
    /// wake-up of its own, and a wake-up costs far more than decoding one (on a small VM
    /// tens of microseconds against one or two): counted per notification, the wake-ups
    /// are nearly all of the CPU. Gathering makes it one wake-up per window however many
    /// straps notify. Two windows, not one: a round that follows a gathered one begins one
    /// window (plus the wake-up's lateness) after it, and steady traffic must stay "dense"
    /// then. Sparse traffic (one strap at 1 Hz) is served at once; dense traffic waits at
    /// most `gather`. A socket that had `burstDatagrams` or more queued in a round quarters
    /// the window (it doubles back, up to `gather`, while every socket has fewer than a
    /// quarter of that; `GatherWindow`), so that a flooding strap never fills its socket's
    /// buffer (a full buffer drops notifications on the sending side). Zero serves every
    /// datagram at once.
    public static let burstDatagrams = 32

    ///
    /// `onRoundEnd` runs on the reader thread after each round that delivered datagrams,
    /// before the reader lets the next ones gather: handlers can hold what a round made
    /// and hand it on at once.
    public init(gather: Duration = .milliseconds(200), onRoundEnd: (@Sendable () -> Void)? = nil) throws(DBusError) {
        self.onRoundEnd = onRoundEnd
        gatherNanoseconds = Atomic(max(0, gather.nanoseconds))
        let ep = clinux_epoll_create()
        guard ep >= 0 else { throw DBusError(.failed, "epoll_create1 failed (errno \(errno))") }
        let wake = clinux_wake_fd()
        guard wake >= 0 else {
            Glibc.close(ep)
            throw DBusError(.failed, "eventfd failed (errno \(errno))")
        }
        epollFD = ep
        wakeFD = wake
        _ = clinux_epoll_add(ep, wake, 0)
        let rc = DetachedThread.start(name: "blegate-notify") { [self] in threadMain() }
        guard rc == 0 else {
            Glibc.close(ep)
            Glibc.close(wake)
            throw DBusError(.failed, "could not start the notify reader thread (error \(rc))")
        }
    }

    /// Changes the gathering window from the next round on (a pause under way ends as
    /// planned): `blegate run` narrows it while a wall screen watches and widens it when
    /// none does.
    public func setGather(_ gather: Duration) {
        gatherNanoseconds.store(max(0, gather.nanoseconds), ordering: .relaxed)
    }

    /// Datagrams delivered so far (all sockets).
    public var datagramCount: Int { datagrams.load(ordering: .relaxed) }

    /// Why the reader thread is not keeping up, or nil while it is: a round of reading
    /// (the handlers included, and the gathering pause) has lasted longer than `gather`,
    /// 2 s and `within`, or the thread ended on an error. The thread stamps each round
    /// as it begins and ends it, so asking wakes nothing: an idle reader stays asleep.
    public func stall(within: Duration) -> String? {
        let began = roundBegan.load(ordering: .relaxed)
        if began == Self.ended { return "the reader thread ended (epoll failed)" }
        guard began != 0 else { return nil }
        let lasted = Self.monotonicNanoseconds() - began
        let limit = gatherNanoseconds.load(ordering: .relaxed) + 2_000_000_000 + within.nanoseconds
        return lasted > limit ? "a round of reading under way for \(Duration.nanoseconds(lasted).readable)" : nil
    }

    /// Takes ownership of the descriptor and starts reading it. `onData` gets every
    /// datagram, in order; `onHangup` comes once, last, when the socket closes from the
    /// other side. Neither is called once `remove` has returned.
    public func add(_ descriptor: DBusFileDescriptor,
                    onData: @escaping @Sendable (UnsafeRawBufferPointer) -> Void,
                    onHangup: @escaping @Sendable () -> Void) -> Registration? {
        add(descriptor, onArrival: { bytes, _ in onData(bytes) }, onHangup: onHangup)
    }

    /// As `add(_:onData:onHangup:)`, with each datagram's arrival: nanoseconds since the
    /// Unix epoch (CLOCK_REALTIME) at which the kernel queued it on the socket, which is
    /// when bluetoothd handed the notification over, however long the datagram then
    /// waited for this reader. Where the kernel gives no stamp, the time it was read.
    public func add(_ descriptor: DBusFileDescriptor,
                    onArrival: @escaping @Sendable (UnsafeRawBufferPointer, _ arrival: Int64) -> Void,
                    onHangup: @escaping @Sendable () -> Void) -> Registration? {
        guard let fd = descriptor.take() else { return nil }
        let stamped = clinux_enable_arrival_stamps(fd) == 0
        let onData = onArrival
        let id: UInt64? = shared.withLock { s in
            guard !s.stopped else { return nil }
            let id = s.nextID
            s.nextID += 1
            s.commands.append(.add(id, Entry(fd: fd, onData: onData, stamped: stamped, onHangup: onHangup)))
            return id
        }
        guard let id else {
            Glibc.close(fd)
            return nil
        }
        wake()
        return Registration(id: id)
    }

    /// Stops reading a socket and closes it (which tells bluetoothd the client let go),
    /// returning once that is done.
    ///
    /// Datagrams still queued on the socket are delivered to `onData` first: a link that
    /// drops closes the socket on bluetoothd's side a moment before the gateway hears
    /// why, and a notification the strap sent in that moment is still a notification.
    /// `onHangup` is not called.
    public func remove(_ registration: Registration) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let queued = shared.withLock { s -> Bool in
                guard !s.stopped else { return false }
                s.commands.append(.remove(registration.id, done: { done.resume() }))
                return true
            }
            if queued { wake() } else { done.resume() }
        }
    }

    /// Closes every socket and ends the thread. No hang-up is reported for them.
    public func stop() {
        let first = shared.withLock { s -> Bool in
            defer { s.stopped = true }
            return !s.stopped
        }
        if first { wake() }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    // MARK: Reader thread

    /// True when the other end of `fd` is closed or shut down: on SOCK_SEQPACKET a
    /// zero-length read is an empty notification unless this says otherwise.
    private static func hungUp(_ fd: Int32) -> Bool {
        // 0x2000 is POLLRDHUP (the peer shut down its side), not exported by Glibc's module.
        var p2 = pollfd(fd: fd, events: Int16(POLLIN) | 0x2000, revents: 0)
        return poll(&p2, 1, 0) >= 0 && (p2.revents & (Int16(POLLHUP | POLLERR) | 0x2000)) != 0
    }

    private static func monotonicNanoseconds() -> Int64 { Int64(MonotonicClock.nanoseconds()) }

    /// One system call reads a whole batch: at saturation a wake-up finds several
    /// datagrams queued per socket.
    private static let batch = Int(CLINUX_RECV_BATCH_MAX), slot = 1024

    /// Reads what is queued on `entry`'s socket and hands each datagram to `onData`.
    /// With `untilEmpty` it reads until the queue is empty; otherwise a short batch ends it
    /// (epoll is level-triggered and reports anything newer). A zero-length read is the
    /// end of the socket when `zeroEnds`, or when the peer has hung up; otherwise it is an
    /// empty notification (a malformed payload, still counted). Returns the datagrams
    /// delivered and whether the socket reached its end.
    /// Whether a zero-length read is the end of the socket rather than an empty
    /// notification. With arrival stamps the kernel says so exactly (only a datagram has
    /// a stamp); without, only a peer that hung up (or `zeroEnds`) makes it the end, and
    /// an empty notification queued just before a hang-up is taken for the end.
    private static func isEnd(_ entry: Entry, arrival: Int64, zeroEnds: Bool) -> Bool {
        if entry.stamped { return arrival == 0 }
        return zeroEnds || hungUp(entry.fd)
    }

    /// Queue order is arrival order: no datagram arrived after one queued behind it. But a
    /// datagram queued before `add` turned stamps on (bluetoothd may notify before its
    /// AcquireNotify reply is read) is stamped by the kernel when it is read, later than
    /// those behind it. The next stamp of its batch bounds it, so one socket's records
    /// stay in order in time, each as close to its arrival as is known.
    private static func boundStamps(_ arrivals: UnsafeMutablePointer<Int64>, count: Int) {
        var later = Int64.max
        var j = count - 1
        while j >= 0 {
            if arrivals[j] != 0 {
                if arrivals[j] > later { arrivals[j] = later } else { later = arrivals[j] }
            }
            j -= 1
        }
    }

    private func drain(_ entry: Entry, untilEmpty: Bool, zeroEnds: Bool, buffer: UnsafeMutablePointer<UInt8>,
                       lengths: UnsafeMutablePointer<Int32>, arrivals: UnsafeMutablePointer<Int64>) -> (delivered: Int, closed: Bool) {
        let batch = Self.batch, slot = Self.slot
        var delivered = 0
        while true {
            let got = Int(clinux_recv_batch(entry.fd, buffer, Int32(slot), Int32(batch), lengths, arrivals))
            if got > 0 {
                if entry.stamped { Self.boundStamps(arrivals, count: got) }
                for j in 0..<got {
                    let length = Int(lengths[j])
                    if length == 0 && Self.isEnd(entry, arrival: arrivals[j], zeroEnds: zeroEnds) { return (delivered, true) }
                    let arrival = arrivals[j] != 0 ? arrivals[j] : WallClock.nanoseconds()
                    entry.onData(UnsafeRawBufferPointer(start: buffer + j * slot, count: length), arrival)
                    delivered += 1
                }
                // A short batch emptied the queue; the read that would only answer
                // EAGAIN is skipped unless the queue must be seen empty.
                if got < batch && !untilEmpty { return (delivered, false) }
            } else if got == 0 {
                if zeroEnds || Self.hungUp(entry.fd) { return (delivered, true) }
                entry.onData(UnsafeRawBufferPointer(start: nil, count: 0), WallClock.nanoseconds())
                delivered += 1
            } else {
                if errno == EINTR { continue }
                return (delivered, errno != EAGAIN && errno != EWOULDBLOCK)
            }
        }
    }

    private func threadMain() {
        var entries: [UInt64: Entry] = [:]
        var keys = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.batch * Self.slot)
        let lengths = UnsafeMutablePointer<Int32>.allocate(capacity: Self.batch)
        let arrivals = UnsafeMutablePointer<Int64>.allocate(capacity: Self.batch)
        defer {
            // A round cut short by the stop still hands over what it read.
            onRoundEnd?()
            // Stopped: nothing under way any more (an error has said so already).
            if roundBegan.load(ordering: .relaxed) != Self.ended { roundBegan.store(0, ordering: .relaxed) }
            // A reader that ends (stopped, or epoll failing) still answers every removal
            // waiting on it.
            let left = shared.withLock { s -> [Command] in
                s.stopped = true
                defer { s.commands = [] }
                return s.commands
            }
            for c in left {
                switch c {
                case .add(_, let e): Glibc.close(e.fd)
                case .remove(_, let done): done()
                }
            }
            buffer.deallocate()
            lengths.deallocate()
            arrivals.deallocate()
            for e in entries.values { Glibc.close(e.fd) }
            Glibc.close(epollFD)
            Glibc.close(wakeFD)
        }
        var previousRound: Int64 = 0
        var window = GatherWindow(limit: gatherNanoseconds.load(ordering: .relaxed), burst: Self.burstDatagrams)
        while true {
            let n = keys.withUnsafeMutableBufferPointer { k in
                events.withUnsafeMutableBufferPointer { e in
                    clinux_epoll_wait(epollFD, k.baseAddress, e.baseAddress, 64, -1)
                }
            }
            if n < 0 {
                if errno == EINTR { continue }
                roundBegan.store(Self.ended, ordering: .relaxed)
                return
            }
            let roundStart = Self.monotonicNanoseconds()
            roundBegan.store(roundStart, ordering: .relaxed)
            var delivered = 0
            var mostFromOneSocket = 0
            for i in 0..<Int(n) {
                let key = keys[i]
                if key == 0 {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    let (commands, stopped) = shared.withLock { s -> ([Command], Bool) in
                        defer { s.commands = [] }
                        return (s.commands, s.stopped)
                    }
                    if stopped {
                        for c in commands {
                            switch c {
                            case .add(_, let e): Glibc.close(e.fd)
                            case .remove(_, let done): done()
                            }
                        }
                        return
                    }
                    for c in commands {
                        switch c {
                        case .add(let id, let entry):
                            if clinux_epoll_add(epollFD, entry.fd, id) == 0 {
                                entries[id] = entry
                            } else {
                                Glibc.close(entry.fd)
                                entry.onHangup()
                            }
                        case .remove(let id, let done):
                            if let entry = entries.removeValue(forKey: id) {
                                _ = clinux_epoll_del(epollFD, entry.fd)
                                let first = drain(entry, untilEmpty: true, zeroEnds: false, buffer: buffer, lengths: lengths, arrivals: arrivals)
                                var n = first.delivered
                                if !first.closed {
                                    // Shut for reading: from here a send on the other side fails,
                                    // so the last read takes whatever came in between. (After
                                    // this, a zero-length read is the end.)
                                    _ = Glibc.shutdown(entry.fd, Int32(SHUT_RD))
                                    n += drain(entry, untilEmpty: true, zeroEnds: true, buffer: buffer, lengths: lengths, arrivals: arrivals).delivered
                                }
                                delivered += n
                                Glibc.close(entry.fd)
                            }
                            done()
                        }
                    }
                    continue
                }
                guard let entry = entries[key] else { continue }
                // Drain what is queued before looking at a hang-up: datagrams sent
                // before the link dropped are still notifications.
                let hangup = (events[i] & CLINUX_EPOLL_HANGUP) != 0
                let (fromSocket, closed) = drain(entry, untilEmpty: hangup, zeroEnds: hangup, buffer: buffer, lengths: lengths, arrivals: arrivals)
                delivered += fromSocket
                mostFromOneSocket = max(mostFromOneSocket, fromSocket)
                // Drained to EAGAIN with a hang-up flagged: nothing more will come.
                if closed || hangup {
                    entries[key] = nil
                    _ = clinux_epoll_del(epollFD, entry.fd)
                    Glibc.close(entry.fd)
                    entry.onHangup()
                }
            }
            if delivered > 0 {
                datagrams.add(delivered, ordering: .relaxed)
                onRoundEnd?()
            }
            // Dense traffic (this round began within two windows of the previous one):
            // let datagrams gather until `gather` after this round began, so the next
            // round takes several at once instead of waking for each.
            let gatherNanoseconds = self.gatherNanoseconds.load(ordering: .relaxed)
            window.adapt(found: mostFromOneSocket, limit: gatherNanoseconds)
            if delivered > 0, roundStart - previousRound < 2 * gatherNanoseconds {
                let left = roundStart + window.nanoseconds - Self.monotonicNanoseconds()
                if left > 0 {
                    var pause = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
                    var rest = timespec()
                    while nanosleep(&pause, &rest) != 0 && errno == EINTR { pause = rest }
                }
            }
            if delivered > 0 { previousRound = roundStart }
            roundBegan.store(0, ordering: .relaxed)
        }
    }
}
