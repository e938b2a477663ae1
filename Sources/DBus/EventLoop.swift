import CDBus
import CLinux
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import SystemSupport
import Timing

/// The dispatcher thread of one connection.
///
/// libdbus is only ever driven from this thread: other threads build messages and
/// queue them here, then wake the thread through an eventfd. That keeps libdbus's
/// watch callbacks, reads, writes and dispatch single-threaded (no races on watch
/// lifetimes), while a send from any task still goes out at once, not at the next
/// read timeout. Incoming replies are matched by serial and resumed directly, and
/// signals are pushed into bounded per-subscriber buffers, so a slow signal consumer
/// can never hold up a method reply.
///
/// Signal gathering (`gather` > 0): when signals come densely (a burst of them begins
/// within two windows of the previous burst) and nothing of this connection waits on the
/// bus (no call awaiting its reply, no method calls served, nothing left to write), the
/// thread lets the next signals queue on the socket until `gather` after the burst began,
/// then reads them all in one wake-up. BlueZ turns every advertisement heard while
/// scanning into a signal, dozens a second in a room of straps; woken for each, the
/// dispatcher's CPU is mostly wake-ups. A call sent meanwhile ends the wait at once (the
/// eventfd), so replies are never gathered; sparse signals are read as they come. The
/// window adapts to what each burst brought (`GatherWindow`): the bus socket holds about
/// 170 signals, and a dispatcher that slept a whole window at a time would read at most
/// that many a window however many dbus-daemon held back for it (under CPU load, when
/// the daemon cannot refill the socket while it is read, it fell seconds behind).
final class EventLoop: @unchecked Sendable {
    enum Command {
        case send(OutgoingMessage, pending: PendingCall?)
        case cancel(callID: UInt64)
        case flush(@Sendable () -> Void)
        case close
    }

    struct PendingCall {
        let id: UInt64
        let deadline: UInt64  // CLOCK_MONOTONIC ns
        let complete: @Sendable (Result<DBusMessage, DBusError>) -> Void
    }

    private struct Inbox {
        var commands: [Command] = []
        var wakeRequested = false
        /// Why the loop ended, once it has: a command submitted after that is answered at
        /// once, or a call racing the end would wait for a reply forever.
        var ended: String?
    }

    private struct TimeoutEntry {
        let timeout: OpaquePointer
        var deadline: UInt64
    }

    // Shared with other threads.
    private let inbox = Mutex(Inbox())
    private let wakeFD: Int32

    // Owned by the loop thread.
    private var raw: OpaquePointer?
    private var watches: [OpaquePointer] = []
    private var timeouts: [TimeoutEntry] = []
    private var pending: [UInt32: PendingCall] = [:]
    private var serialByCall: [UInt64: UInt32] = [:]
    private var running = true
    private var thread: pthread_t?

    /// See the type's comment; 0 reads every signal at once. Any thread may change it.
    let gatherNanoseconds: Atomic<UInt64>
    /// The window in force, adapted per burst (loop thread), and a copy other threads read.
    private var window: GatherWindow
    let windowNow: Atomic<Int64>
    /// Messages one burst may bring before the window halves: well under the ~170 signals
    /// of a few hundred bytes that fill a bus socket (about 120 of 800 bytes, an
    /// InterfacesAdded of a phone nearby).
    static let burstMessages = 96
    /// When the current burst of incoming messages began (a wait that ended with the
    /// socket readable), and the burst before it (monotonic ns; 0: none yet).
    private var burstBegan: UInt64 = 0
    private var previousBurst: UInt64 = 0
    /// What the current burst brought: only signals may wait for the next window.
    private var signalsInBurst = 0
    private var othersInBurst = 0
    /// A connection that answers method calls never gathers: a call arriving during the
    /// wait would wait with the signals.
    let servesMethods = Atomic<Bool>(false)

    /// Called on the loop thread for every incoming message that is not a reply, with
    /// the wall-clock milliseconds when it was read off the socket; the pointer is valid
    /// only during the call.
    var onMessage: ((OpaquePointer, Int64) -> Void)?
    /// When the loop last read from the socket (wall-clock ms): libdbus reads a few KiB
    /// per round and the messages in them are dispatched right after, so this is the
    /// arrival time of every message popped until the next read.
    private var readAt: Int64 = WallClock.milliseconds()
    /// Called once on the loop thread when the bus goes away (or `close` ran).
    var onDisconnect: ((String) -> Void)?

    init(gather: Duration = .zero) {
        wakeFD = clinux_wake_fd()
        gatherNanoseconds = Atomic(UInt64(max(0, gather.nanoseconds)))
        window = GatherWindow(limit: max(0, gather.nanoseconds), burst: Self.burstMessages, shrink: 2)
        windowNow = Atomic(window.nanoseconds)
    }

    deinit {
        if wakeFD >= 0 { Glibc.close(wakeFD) }
    }

    // MARK: Any thread

    func submit(_ command: Command) {
        let (needWake, ended) = inbox.withLock { box -> (Bool, String?) in
            if let reason = box.ended { return (false, reason) }
            box.commands.append(command)
            if box.wakeRequested { return (false, nil) }
            box.wakeRequested = true
            return (true, nil)
        }
        if let ended {
            Self.answerAfterEnd(command, reason: ended)
            return
        }
        if needWake {
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
        }
    }

    /// Opens the connection on a new thread and runs the loop there.
    /// `ready` is called on that thread with the unique name or an error.
    func start(address: String, register: Bool, ready: @escaping @Sendable (Result<String?, DBusError>) -> Void) {
        let box = StartBox(loop: self, address: address, register: register, ready: ready)
        let rc = DetachedThread.start(name: "blegate-dbus", stackSize: 512 * 1024) { box.loop.threadMain(box) }
        if rc != 0 {
            ready(.failure(DBusError(.failed, "could not start the D-Bus dispatcher thread (error \(rc))")))
        }
    }

    final class StartBox: Sendable {
        let loop: EventLoop
        let address: String
        let register: Bool
        let ready: @Sendable (Result<String?, DBusError>) -> Void
        init(loop: EventLoop, address: String, register: Bool, ready: @escaping @Sendable (Result<String?, DBusError>) -> Void) {
            self.loop = loop
            self.address = address
            self.register = register
            self.ready = ready
        }
    }

    // MARK: Loop thread

    private func threadMain(_ box: StartBox) {
        var errName: UnsafeMutablePointer<CChar>? = nil
        var errMessage: UnsafeMutablePointer<CChar>? = nil
        guard let c = cdbus_open_private(box.address, &errName, &errMessage) else {
            box.ready(.failure(takeError(errName, errMessage)))
            return
        }
        // A gateway reports a lost bus; it never lets libdbus call _exit() for it.
        dbus_connection_set_exit_on_disconnect(c, 0)
        var uniqueName: String? = nil
        if box.register {
            guard cdbus_bus_register(c, &errName, &errMessage) != 0 else {
                dbus_connection_close(c)
                dbus_connection_unref(c)
                box.ready(.failure(takeError(errName, errMessage)))
                return
            }
            uniqueName = dbus_bus_get_unique_name(c).map { String(cString: $0) }
        }
        raw = c
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(c, { w, d in
            Unmanaged<EventLoop>.fromOpaque(d!).takeUnretainedValue().watches.append(w!)
            return 1
        }, { w, d in
            Unmanaged<EventLoop>.fromOpaque(d!).takeUnretainedValue().watches.removeAll { $0 == w! }
        }, { _, _ in
            // Enabled flags are read afresh on every poll round.
        }, me, nil)
        dbus_connection_set_timeout_functions(c, { t, d in
            let loop = Unmanaged<EventLoop>.fromOpaque(d!).takeUnretainedValue()
            loop.timeouts.append(TimeoutEntry(timeout: t!, deadline: EventLoop.deadline(for: t!)))
            return 1
        }, { t, d in
            Unmanaged<EventLoop>.fromOpaque(d!).takeUnretainedValue().timeouts.removeAll { $0.timeout == t! }
        }, { t, d in
            let loop = Unmanaged<EventLoop>.fromOpaque(d!).takeUnretainedValue()
            if let i = loop.timeouts.firstIndex(where: { $0.timeout == t! }) {
                loop.timeouts[i].deadline = EventLoop.deadline(for: t!)
            }
        }, me, nil)
        box.ready(.success(uniqueName))
        run(c)
    }

    private func takeError(_ name: UnsafeMutablePointer<CChar>?, _ message: UnsafeMutablePointer<CChar>?) -> DBusError {
        defer {
            free(name)
            free(message)
        }
        return DBusError(
            name: name.map { String(cString: $0) } ?? DBusError.Name.failed.rawValue,
            message: message.map { String(cString: $0) } ?? "")
    }

    private static func deadline(for t: OpaquePointer) -> UInt64 {
        guard dbus_timeout_get_enabled(t) != 0 else { return .max }
        return MonotonicClock.nanoseconds() + UInt64(max(0, dbus_timeout_get_interval(t))) * 1_000_000
    }

    private func run(_ c: OpaquePointer) {
        var fds: [pollfd] = []
        var polled: [OpaquePointer] = []
        var disconnectReason: String? = nil
        while running {
            drainCommands(c)
            if !running { break }
            dispatchIncoming(c)
            if dbus_connection_get_is_connected(c) == 0 {
                disconnectReason = "the bus closed the connection"
                break
            }

            fds.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            for w in watches where dbus_watch_get_enabled(w) != 0 {
                let flags = dbus_watch_get_flags(w)
                var events: Int16 = 0
                if flags & CDBUS_WATCH_READABLE != 0 { events |= Int16(POLLIN) }
                if flags & CDBUS_WATCH_WRITABLE != 0 { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: dbus_watch_get_unix_fd(w), events: events, revents: 0))
                polled.append(w)
            }
            let gatherUntil = gatheringDeadline(c)
            let timeout = gatherUntil == nil ? pollTimeoutMillis() : 0
            let rc = poll(&fds, nfds_t(fds.count), timeout)
            if rc < 0 && errno != EINTR {
                disconnectReason = "poll failed (errno \(errno))"
                break
            }
            if rc == 0, let gatherUntil {
                // Everything queued is read: let the next signals gather (a command still
                // wakes the thread at once).
                waitForCommand(until: gatherUntil)
                continue
            }
            if rc > 0 {
                readAt = WallClock.milliseconds()
                if timeout != 0, fds.dropFirst().contains(where: { $0.revents & Int16(POLLIN) != 0 }) {
                    // A wait ended with the bus readable: a new burst. What the last
                    // one brought sets the window for this one.
                    window.adapt(found: signalsInBurst + othersInBurst, limit: Int64(gatherNanoseconds.load(ordering: .relaxed)))
                    windowNow.store(window.nanoseconds, ordering: .relaxed)
                    previousBurst = burstBegan
                    burstBegan = MonotonicClock.nanoseconds()
                    signalsInBurst = 0
                    othersInBurst = 0
                }
            }
            if fds[0].revents != 0 {
                var value: UInt64 = 0
                _ = Glibc.read(wakeFD, &value, 8)
            }
            for (i, w) in polled.enumerated() {
                let re = fds[i + 1].revents
                guard re != 0, watches.contains(where: { $0 == w }) else { continue }
                var flags: UInt32 = 0
                if re & Int16(POLLIN) != 0 { flags |= CDBUS_WATCH_READABLE }
                if re & Int16(POLLOUT) != 0 { flags |= CDBUS_WATCH_WRITABLE }
                if re & Int16(POLLERR) != 0 { flags |= CDBUS_WATCH_ERROR }
                if re & Int16(POLLHUP) != 0 { flags |= CDBUS_WATCH_HANGUP }
                dbus_watch_handle(w, flags)
            }
            fireTimeouts()
        }
        // Tear down: fail what waits, then tell the owner.
        let reason = disconnectReason ?? "the connection was closed"
        if dbus_connection_get_is_connected(c) != 0 {
            dbus_connection_flush(c)
        }
        failAllPending(DBusError.disconnected(reason))
        dbus_connection_close(c)
        dispatchIncoming(c, replyOnly: true)
        dbus_connection_unref(c)
        raw = nil
        onDisconnect?(reason)
        onDisconnect = nil
        onMessage = nil
        // Commands that raced with the shutdown still get their answer, and so does every
        // command submitted from now on.
        let late = inbox.withLock { box -> [Command] in
            box.ended = reason
            defer { box.commands = [] }
            return box.commands
        }
        for command in late { Self.answerAfterEnd(command, reason: reason) }
    }

    /// A call fails as disconnected and a flush returns: nothing will be written.
    private static func answerAfterEnd(_ command: Command, reason: String) {
        switch command {
        case .send(_, let pendingCall?): pendingCall.complete(.failure(DBusError.disconnected(reason)))
        case .flush(let done): done()
        default: break
        }
    }

    private func drainCommands(_ c: OpaquePointer) {
        let commands = inbox.withLock { box -> [Command] in
            box.wakeRequested = false
            defer { box.commands.removeAll(keepingCapacity: true) }
            return box.commands
        }
        for command in commands {
            switch command {
            case .send(let message, let call):
                if call != nil {
                    dbus_message_set_no_reply(message.pointer, 0)
                }
                var serial: UInt32 = 0
                guard dbus_connection_send(c, message.pointer, &serial) != 0 else {
                    call?.complete(.failure(DBusError(.noMemory, "libdbus refused to queue the message")))
                    continue
                }
                if let call {
                    pending[serial] = call
                    serialByCall[call.id] = serial
                }
            case .cancel(let id):
                if let serial = serialByCall.removeValue(forKey: id), let call = pending.removeValue(forKey: serial) {
                    call.complete(.failure(DBusError(.noReply, "the call was cancelled")))
                }
            case .flush(let done):
                dbus_connection_flush(c)
                readAt = WallClock.milliseconds()
                done()
            case .close:
                running = false
            }
        }
    }

    private func dispatchIncoming(_ c: OpaquePointer, replyOnly: Bool = false) {
        while let m = dbus_connection_pop_message(c) {
            defer { dbus_message_unref(m) }
            let type = dbus_message_get_type(m)
            if type == CDBUS_MESSAGE_TYPE_METHOD_RETURN || type == CDBUS_MESSAGE_TYPE_ERROR {
                let serial = dbus_message_get_reply_serial(m)
                guard let call = pending.removeValue(forKey: serial) else { continue }
                serialByCall[call.id] = nil
                let message = DBusMessage(m, receivedAt: readAt)
                call.complete(message.kind == .error ? .failure(message.asError) : .success(message))
                continue
            }
            if replyOnly { continue }
            if type == CDBUS_MESSAGE_TYPE_SIGNAL {
                if dbus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                    continue  // is_connected turns false; the loop notices it.
                }
                signalsInBurst += 1
            } else {
                othersInBurst += 1
            }
            onMessage?(m, readAt)
        }
    }

    /// Until when (monotonic ns) to let signals gather before reading again, or nil to
    /// read as usual: the current burst held signals only, came within two windows of
    /// the previous one, its window is not over, and nothing waits on the bus. (When the
    /// window is over, the signals that came meanwhile make the next wait end at once:
    /// under steady traffic one window follows the other at one wake-up each.)
    private func gatheringDeadline(_ c: OpaquePointer) -> UInt64? {
        let gatherNanoseconds = self.gatherNanoseconds.load(ordering: .relaxed)
        guard gatherNanoseconds > 0, signalsInBurst > 0, othersInBurst == 0, previousBurst != 0, !servesMethods.load(ordering: .relaxed),
              burstBegan - previousBurst < 2 * gatherNanoseconds, pending.isEmpty else { return nil }
        let until = burstBegan + min(UInt64(window.nanoseconds), gatherNanoseconds)
        guard MonotonicClock.nanoseconds() < until, dbus_connection_has_messages_to_send(c) == 0 else { return nil }
        return until
    }

    /// Sleeps until `deadline` (monotonic ns), a command, or libdbus's next timeout.
    private func waitForCommand(until deadline: UInt64) {
        let now = MonotonicClock.nanoseconds()
        guard deadline > now else { return }
        var timeout = Int32((deadline - now + 999_999) / 1_000_000)
        let libdbus = pollTimeoutMillis()
        if libdbus >= 0 { timeout = min(timeout, libdbus) }
        var wake = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
        if poll(&wake, 1, timeout) > 0 {
            var value: UInt64 = 0
            _ = Glibc.read(wakeFD, &value, 8)
        }
    }

    private func pollTimeoutMillis() -> Int32 {
        var earliest = UInt64.max
        for t in timeouts where t.deadline < earliest { earliest = t.deadline }
        for p in pending.values where p.deadline < earliest { earliest = p.deadline }
        if earliest == .max { return -1 }
        let now = MonotonicClock.nanoseconds()
        if earliest <= now { return 0 }
        return Int32(min(UInt64(Int32.max), (earliest - now + 999_999) / 1_000_000))
    }

    private func fireTimeouts() {
        let now = MonotonicClock.nanoseconds()
        for entry in timeouts where entry.deadline <= now {
            guard timeouts.contains(where: { $0.timeout == entry.timeout }) else { continue }
            dbus_timeout_handle(entry.timeout)
            if let i = timeouts.firstIndex(where: { $0.timeout == entry.timeout }) {
                timeouts[i].deadline = EventLoop.deadline(for: entry.timeout)
            }
        }
        let expired = pending.filter { $0.value.deadline <= now }
        for (serial, call) in expired {
            pending[serial] = nil
            serialByCall[call.id] = nil
            call.complete(.failure(DBusError(.noReply, "no reply within the call's timeout")))
        }
    }

    private func failAllPending(_ error: DBusError) {
        let all = pending.values
        pending.removeAll()
        serialByCall.removeAll()
        for call in all { call.complete(.failure(error)) }
    }
}
