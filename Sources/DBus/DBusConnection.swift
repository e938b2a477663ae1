import CDBus
import Synchronization
import Timing

/// One private connection to a bus, with its own dispatcher thread.
///
/// All subscriptions share the connection's single dispatcher and one set of match
/// rules (reference-counted by rule text), so a thousand subscribers to the same
/// BlueZ signals cost one AddMatch.
public final class DBusConnection: Sendable {
    /// The bus-assigned unique name (`:1.42`), nil on a peer-to-peer connection.
    public let uniqueName: String?
    public let address: DBusBusAddress

    let loop: EventLoop
    let router: Router
    private let callIDs = Atomic<UInt64>(1)

    private init(address: DBusBusAddress, uniqueName: String?, loop: EventLoop, router: Router) {
        self.address = address
        self.uniqueName = uniqueName
        self.loop = loop
        self.router = router
    }

    /// Opens a private connection (never shared with other code in the process) and,
    /// on a bus, registers with Hello. The process is never exited by libdbus when
    /// the bus goes away: `disconnected()` reports it instead.
    ///
    /// `gatherSignals`: while signals come densely and no reply is awaited, the dispatcher
    /// lets them gather up to this long per wake-up (see `EventLoop`); each still carries
    /// the time it was read. Zero reads every signal as it comes.
    public static func connect(_ bus: DBusBusAddress = .system, gatherSignals: Duration = .zero) async throws(DBusError) -> DBusConnection {
        LibDBus.initialize()
        let (addressString, isBus) = try bus.resolve()
        let loop = EventLoop(gather: gatherSignals)
        let router = Router()
        let result: Result<String?, DBusError> = await withCheckedContinuation { cont in
            loop.onMessage = { message, receivedAt in router.route(message, receivedAt: receivedAt, loop: loop) }
            loop.onDisconnect = { reason in router.disconnected(reason) }
            loop.start(address: addressString, register: isBus) { cont.resume(returning: $0) }
        }
        let unique = try result.get()
        let connection = DBusConnection(address: bus, uniqueName: unique, loop: loop, router: router)
        return connection
    }

    deinit {
        loop.submit(.close)
    }

    /// Changes the signal gathering window (`connect(_:gatherSignals:)`) from the next
    /// burst on.
    public func setSignalGather(_ gather: Duration) {
        loop.gatherNanoseconds.store(UInt64(max(0, gather.nanoseconds)), ordering: .relaxed)
    }

    /// The gathering window the dispatcher applies now: at most the one set, shorter while
    /// bursts bring more than a socketful's worth of signals in one window.
    public var signalGatherNow: Duration {
        .nanoseconds(min(loop.windowNow.load(ordering: .relaxed), Int64(loop.gatherNanoseconds.load(ordering: .relaxed))))
    }

    /// Closes the connection; pending calls fail with `Disconnected`, streams finish.
    public func close() {
        loop.submit(.close)
    }

    public var isConnected: Bool { router.isConnected }

    /// Returns once everything queued before the call has been written to the bus:
    /// what a process does before it exits, or its last signals are lost.
    public func flush() async {
        guard router.isConnected else { return }
        let loop = self.loop
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            loop.submit(.flush { cont.resume() })
        }
    }

    /// Returns when the connection is gone, with the reason.
    public func disconnected() async -> String {
        await router.waitForDisconnect()
    }

    /// Counters for the whole connection.
    public var statistics: DBusStatistics { router.statistics() }

    // MARK: Calls

    /// Calls a method and returns the reply body.
    ///
    /// - Throws: `DBusError` with the peer's error name for error replies,
    ///   `org.freedesktop.DBus.Error.NoReply` on timeout or cancellation,
    ///   `...Disconnected` when the bus goes away first.
    @discardableResult
    public func call(
        destination: String?, path: DBusObjectPath, interface: String?, member: String,
        _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        try await callReturningMessage(destination: destination, path: path, interface: interface, member: member, arguments, timeout: timeout).body
    }

    /// As `call`, returning the whole reply (headers included).
    public func callReturningMessage(
        destination: String?, path: DBusObjectPath, interface: String?, member: String,
        _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> DBusMessage {
        guard router.isConnected else { throw DBusError.disconnected() }
        let message = try OutgoingMessage.methodCall(destination: destination, path: path, interface: interface, member: member, body: arguments)
        let id = callIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        let timeoutNs = UInt64(max(0, timeout.nanoseconds))
        let loop = self.loop
        let result: Result<DBusMessage, DBusError> = await withTaskCancellationHandler {
            await withCheckedContinuation { cont in
                let pending = EventLoop.PendingCall(id: id, deadline: MonotonicClock.nanoseconds() + timeoutNs) { cont.resume(returning: $0) }
                loop.submit(.send(message, pending: pending))
            }
        } onCancel: {
            loop.submit(.cancel(callID: id))
        }
        return try result.get()
    }

    /// Sends a method call without waiting for (or wanting) a reply.
    public func callNoReply(destination: String?, path: DBusObjectPath, interface: String?, member: String, _ arguments: [DBusValue] = []) throws(DBusError) {
        let message = try OutgoingMessage.methodCall(destination: destination, path: path, interface: interface, member: member, body: arguments)
        dbus_message_set_no_reply(message.pointer, 1)
        loop.submit(.send(message, pending: nil))
    }

    // MARK: Signals

    /// Emits a signal (broadcast unless `destination` is given). Never blocks.
    public func emit(path: DBusObjectPath, interface: String, member: String, _ arguments: [DBusValue] = [], destination: String? = nil) throws(DBusError) {
        guard router.isConnected else { throw DBusError.disconnected() }
        let message = try OutgoingMessage.signal(path: path, interface: interface, member: member, destination: destination, body: arguments)
        loop.submit(.send(message, pending: nil))
        router.countEmitted()
    }

    /// Subscribes to messages matching `rule`.
    ///
    /// The rule is installed on the bus before this returns, so no matching signal
    /// sent after the return is missed. The stream buffers at most `bufferSize`
    /// signals; when the consumer falls behind, newer signals are dropped and
    /// counted (`DBusSignalStream.dropped`, `statistics.signalsDropped`) rather
    /// than slowing the dispatcher or any other subscriber.
    public func signals(matching rule: DBusMatchRule, bufferSize: Int = 4096) async throws(DBusError) -> DBusSignalStream {
        let counters = SubscriptionCounters()
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .bufferingOldest(max(1, bufferSize)))
        let id = router.addSubscription(rule: rule, sink: .stream(continuation), counters: counters)
        continuation.onTermination = { [weak self] _ in
            self?.removeSubscription(id)
        }
        do {
            try await ensureRule(rule)
            if let sender = rule.sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" {
                try await trackOwner(of: sender)
            }
        } catch {
            continuation.finish()
            throw error
        }
        return DBusSignalStream(stream: stream, counters: counters)
    }

    /// Subscribes with a handler that runs on the dispatcher thread, for hot paths
    /// that cannot afford a task wake-up per signal (a GATT notification stream).
    /// The handler must return quickly and never block: hand work on to a buffer of
    /// your own. Cancel with `unsubscribe(_:)`.
    public func subscribe(matching rule: DBusMatchRule, handler: @escaping @Sendable (DBusSignal) -> Void) async throws(DBusError) -> DBusSubscription {
        try await addHandlerSubscription(rule, .handler(handler))
    }

    private func addHandlerSubscription(_ rule: DBusMatchRule, _ sink: Router.Sink) async throws(DBusError) -> DBusSubscription {
        let counters = SubscriptionCounters()
        let id = router.addSubscription(rule: rule, sink: sink, counters: counters)
        do {
            try await ensureRule(rule)
            if let sender = rule.sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" {
                try await trackOwner(of: sender)
            }
        } catch {
            removeSubscription(id)
            throw error
        }
        return DBusSubscription(id: id, counters: counters)
    }

    /// As `subscribe(matching:handler:)`, handing the signal over undecoded: the
    /// handler reads what it needs through `DBusSignalView` (for a GATT notification,
    /// `withChangedBytes("Value")`), so the per-signal cost is libdbus's own.
    public func subscribeRaw(matching rule: DBusMatchRule, handler: @escaping @Sendable (DBusSignalView) -> Void) async throws(DBusError) -> DBusSubscription {
        try await addHandlerSubscription(rule, .raw(handler))
    }

    /// Ends a handler subscription. A signal the dispatcher is delivering at that
    /// very moment may still reach the handler once; none after that.
    public func unsubscribe(_ subscription: DBusSubscription) {
        removeSubscription(subscription.id)
    }

    private func removeSubscription(_ id: UInt64) {
        guard let removed = router.removeSubscription(id) else { return }
        if removed.lastUseOfRule {
            try? callNoReply(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "RemoveMatch", [.string(removed.rule.ruleString)])
        }
        if let name = removed.untrackName {
            try? callNoReply(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "RemoveMatch", [.string(Router.ownerRule(name).ruleString)])
        }
    }

    /// Installs a rule on the bus once per distinct rule text; later users wait for
    /// the first AddMatch to finish so they too miss nothing.
    func ensureRule(_ rule: DBusMatchRule) async throws(DBusError) {
        guard uniqueName != nil else { return }  // peer-to-peer: everything arrives anyway
        let text = rule.ruleString
        let action = router.beginRule(text)
        switch action {
        case .ready:
            return
        case .wait(let task):
            try await task.value.get()
        case .install(let complete):
            do {
                try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "AddMatch", [.string(text)])
                complete(.success(()))
            } catch {
                complete(.failure(error))
                throw error
            }
        }
    }

    /// Keeps the unique owner of a well-known name up to date, so that local routing
    /// of signals by sender stays right across a restart of that service.
    func trackOwner(of name: String) async throws(DBusError) {
        guard router.startTracking(name) else { return }
        try await ensureRule(Router.ownerRule(name))
        let owner = try? await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner", [.string(name)]).first?.stringValue
        router.seedOwner(name, owner)
    }

    // MARK: Names

    public struct RequestNameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let allowReplacement = RequestNameFlags(rawValue: 1)
        public static let replaceExisting = RequestNameFlags(rawValue: 2)
        public static let doNotQueue = RequestNameFlags(rawValue: 4)
    }

    public enum RequestNameResult: UInt32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// Asks the bus for a well-known name.
    @discardableResult
    public func requestName(_ name: String, flags: RequestNameFlags = [.doNotQueue]) async throws(DBusError) -> RequestNameResult {
        guard DBusNameCheck.isValidBusName(name), !name.hasPrefix(":") else {
            throw DBusError(.invalidArgs, "'\(name)' is not a valid well-known bus name")
        }
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "RequestName", [.string(name), .uint32(flags.rawValue)])
        guard let code = reply.first?.integerValue, let result = RequestNameResult(rawValue: UInt32(truncatingIfNeeded: code)) else {
            throw DBusError(.failed, "unexpected RequestName reply \(reply)")
        }
        return result
    }

    public func releaseName(_ name: String) async throws(DBusError) {
        try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "ReleaseName", [.string(name)])
    }

    /// The current unique owner of `name`, nil when it has none.
    public func nameOwner(of name: String) async throws(DBusError) -> String? {
        do {
            return try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner", [.string(name)]).first?.stringValue
        } catch where error.is(.nameHasNoOwner) {
            return nil
        }
    }

    /// The owner of `name` now, then every change (nil while nobody owns it): this is
    /// how a restart of bluetoothd becomes visible.
    public func nameOwnerChanges(of name: String) async throws(DBusError) -> AsyncStream<String?> {
        let signals = try await self.signals(matching: Router.ownerRule(name), bufferSize: 64)
        let initial = try await nameOwner(of: name)
        let (stream, continuation) = AsyncStream.makeStream(of: String?.self, bufferingPolicy: .unbounded)
        continuation.yield(initial)
        let task = Task {
            for await signal in signals {
                guard signal.body.count == 3, let newOwner = signal.body[2].stringValue else { continue }
                continuation.yield(newOwner.isEmpty ? nil : newOwner)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    // MARK: Serving

    /// Installs the handler for incoming method calls. It runs on the dispatcher
    /// thread and must not block: answer inline or hand work to a task.
    public func setMethodCallHandler(_ handler: @escaping @Sendable (DBusMessage) -> Void) {
        loop.servesMethods.store(true, ordering: .relaxed)
        router.setMethodHandler(handler)
    }

    /// Replies to a method call (ignored when the caller asked for no reply).
    public func reply(to call: DBusMessage, _ values: [DBusValue]) throws(DBusError) {
        guard !call.noReplyExpected else { return }
        let message = try OutgoingMessage.methodReturn(replySerial: call.serial, destination: call.sender, body: values)
        loop.submit(.send(message, pending: nil))
    }

    public func reply(to call: DBusMessage, error: DBusError) {
        guard !call.noReplyExpected else { return }
        if let message = OutgoingMessage.errorReply(replySerial: call.serial, destination: call.sender, error: error) {
            loop.submit(.send(message, pending: nil))
        }
    }
}

/// Process-wide libdbus setup, done once.
enum LibDBus {
    private static let once: Bool = {
        // libdbus aborts the process on API misuse by default; every such misuse is
        // checked in Swift first, and this keeps a missed one from killing a gateway.
        if getenv("DBUS_FATAL_WARNINGS") == nil { setenv("DBUS_FATAL_WARNINGS", "0", 0) }
        dbus_threads_init_default()
        return true
    }()

    static func initialize() { _ = once }
}

/// Counters of one connection.
public struct DBusStatistics: Sendable, Hashable {
    public var signalsReceived: Int
    public var signalsDelivered: Int
    public var signalsDropped: Int
    public var signalsEmitted: Int
    public var methodCallsReceived: Int
}

final class SubscriptionCounters: Sendable {
    let delivered = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
}

/// A handler subscription (see `DBusConnection.subscribe(matching:handler:)`).
public struct DBusSubscription: Sendable {
    let id: UInt64
    let counters: SubscriptionCounters
    public var delivered: Int { counters.delivered.load(ordering: .relaxed) }
}

/// A subscription's signals, in the order the bus delivered them.
public struct DBusSignalStream: AsyncSequence, Sendable {
    public typealias Element = DBusSignal
    let stream: AsyncStream<DBusSignal>
    let counters: SubscriptionCounters

    public func makeAsyncIterator() -> AsyncStream<DBusSignal>.Iterator { stream.makeAsyncIterator() }

    /// Signals dropped because this consumer's buffer was full.
    public var dropped: Int { counters.dropped.load(ordering: .relaxed) }
    /// Signals handed to this stream's buffer.
    public var delivered: Int { counters.delivered.load(ordering: .relaxed) }
}

#if canImport(Glibc)
import Glibc
#endif
