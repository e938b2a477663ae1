import CDBus
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The connection's routing tables: subscriptions, installed match rules, the
/// owners of tracked well-known names and the method-call handler.
///
/// `route` runs on the dispatcher thread; it holds the lock only to pick the
/// receivers, and hands messages over outside it with non-blocking yields.
final class Router: Sendable {
    enum Sink: Sendable {
        case stream(AsyncStream<DBusSignal>.Continuation)
        case handler(@Sendable (DBusSignal) -> Void)
        case raw(@Sendable (DBusSignalView) -> Void)
    }

    /// A class, so that the dispatcher's walk over every subscription for every signal
    /// retains one reference each instead of copying a rule's strings.
    final class Subscription: Sendable {
        let rule: DBusMatchRule
        let sink: Sink
        let counters: SubscriptionCounters

        init(rule: DBusMatchRule, sink: Sink, counters: SubscriptionCounters) {
            self.rule = rule
            self.sink = sink
            self.counters = counters
        }
    }

    enum RuleAction {
        case ready
        case wait(Task<Result<Void, DBusError>, Never>)
        case install(@Sendable (Result<Void, DBusError>) -> Void)
    }

    struct Removal {
        let rule: DBusMatchRule
        let lastUseOfRule: Bool
        let untrackName: String?
    }

    private struct State {
        var nextID: UInt64 = 1
        var subscriptions: [UInt64: Subscription] = [:] {
            didSet { snapshot = Array(subscriptions.values) }
        }
        /// What the dispatcher iterates: taken with one retain, no copy per signal.
        var snapshot: [Subscription] = []
        var ruleUsers: [String: Int] = [:]
        var installedRules: Set<String> = []
        var installing: [String: Task<Result<Void, DBusError>, Never>] = [:]
        var trackedNames: [String: Int] = [:]
        var owners: [String: String] = [:]
        var methodHandler: (@Sendable (DBusMessage) -> Void)?
        var connected = true
        var disconnectReason: String?
        var disconnectWaiters: [CheckedContinuation<String, Never>] = []
        var received = 0
        var emitted = 0
        var methodCalls = 0
    }

    private let state = Mutex(State())
    private let delivered = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    static func ownerRule(_ name: String) -> DBusMatchRule {
        DBusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                      path: "/org/freedesktop/DBus", arguments: [0: name])
    }

    // MARK: Subscriptions

    func addSubscription(rule: DBusMatchRule, sink: Sink, counters: SubscriptionCounters) -> UInt64 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.subscriptions[id] = Subscription(rule: rule, sink: sink, counters: counters)
            s.ruleUsers[rule.ruleString, default: 0] += 1
            return id
        }
    }

    func removeSubscription(_ id: UInt64) -> Removal? {
        state.withLock { s in
            guard let sub = s.subscriptions.removeValue(forKey: id) else { return nil }
            let text = sub.rule.ruleString
            let users = (s.ruleUsers[text] ?? 1) - 1
            var last = false
            if users <= 0 {
                s.ruleUsers[text] = nil
                last = s.installedRules.remove(text) != nil
            } else {
                s.ruleUsers[text] = users
            }
            var untrack: String? = nil
            if let sender = sender(of: sub.rule), let n = s.trackedNames[sender] {
                if n <= 1 {
                    s.trackedNames[sender] = nil
                    s.owners[sender] = nil
                    let ownerText = Router.ownerRule(sender).ruleString
                    let remaining = (s.ruleUsers[ownerText] ?? 1) - 1
                    if remaining <= 0 {
                        s.ruleUsers[ownerText] = nil
                        if s.installedRules.remove(ownerText) != nil { untrack = sender }
                    } else {
                        s.ruleUsers[ownerText] = remaining
                    }
                } else {
                    s.trackedNames[sender] = n - 1
                }
            }
            return Removal(rule: sub.rule, lastUseOfRule: last, untrackName: untrack)
        }
    }

    private func sender(of rule: DBusMatchRule) -> String? {
        guard let sender = rule.sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" else { return nil }
        return sender
    }

    func beginRule(_ text: String) -> RuleAction {
        state.withLock { s -> RuleAction in
            if s.installedRules.contains(text) { return .ready }
            if let task = s.installing[text] { return .wait(task) }
            let (stream, cont) = AsyncStream.makeStream(of: Result<Void, DBusError>.self, bufferingPolicy: .bufferingNewest(1))
            let task = Task<Result<Void, DBusError>, Never> {
                for await r in stream { return r }
                return .failure(DBusError.disconnected())
            }
            s.installing[text] = task
            return .install { [weak self] result in
                self?.state.withLock { s in
                    s.installing[text] = nil
                    if case .success = result { s.installedRules.insert(text) }
                }
                cont.yield(result)
                cont.finish()
            }
        }
    }

    /// Returns true when the caller should install tracking for `name`.
    func startTracking(_ name: String) -> Bool {
        state.withLock { s in
            let n = s.trackedNames[name] ?? 0
            s.trackedNames[name] = n + 1
            if n == 0 { s.ruleUsers[Router.ownerRule(name).ruleString, default: 0] += 1 }
            return n == 0
        }
    }

    func seedOwner(_ name: String, _ owner: String?) {
        state.withLock { s in
            guard s.trackedNames[name] != nil, s.owners[name] == nil, let owner else { return }
            s.owners[name] = owner
        }
    }

    func setMethodHandler(_ handler: @escaping @Sendable (DBusMessage) -> Void) {
        state.withLock { $0.methodHandler = handler }
    }

    // MARK: Dispatcher thread

    func route(_ raw: OpaquePointer, receivedAt: Int64, loop: EventLoop) {
        switch dbus_message_get_type(raw) {
        case CDBUS_MESSAGE_TYPE_SIGNAL:
            routeSignal(raw, receivedAt: receivedAt)
        case CDBUS_MESSAGE_TYPE_METHOD_CALL:
            let message = DBusMessage(raw, receivedAt: receivedAt)
            let handler = state.withLock { s -> (@Sendable (DBusMessage) -> Void)? in
                s.methodCalls += 1
                return s.methodHandler
            }
            if message.interface == "org.freedesktop.DBus.Peer" {
                answerPeer(message, loop: loop)
            } else if let handler {
                handler(message)
            } else if !message.noReplyExpected,
                      let reply = OutgoingMessage.errorReply(replySerial: message.serial, destination: message.sender,
                                                             error: DBusError(.unknownObject, "no object at \(message.path?.rawValue ?? "?")")) {
                loop.submit(.send(reply, pending: nil))
            }
        default:
            break
        }
    }

    /// Routing tests the header on libdbus's strings first and decodes the body at
    /// most once, only when a subscriber needs Swift values: a signal nobody wants,
    /// or one only raw handlers want, allocates nothing here.
    private func routeSignal(_ raw: OpaquePointer, receivedAt: Int64) {
        var message: DBusMessage? = nil
        if Router.isNameOwnerChanged(raw) {
            let m = DBusMessage(raw, receivedAt: receivedAt)
            message = m
            state.withLock { s in
                if m.body.count == 3, let name = m.body[0].stringValue, s.trackedNames[name] != nil {
                    let newOwner = m.body[2].stringValue ?? ""
                    s.owners[name] = newOwner.isEmpty ? nil : newOwner
                }
            }
        }
        let (subscriptions, owners) = state.withLock { s in
            s.received += 1
            return (s.snapshot, s.owners)
        }
        for sub in subscriptions {
            let resolved = sub.rule.sender.flatMap { owners.isEmpty ? nil : owners[$0] }
            guard sub.rule.matchesHeader(raw: raw, kind: .signal, resolvedSender: resolved) else { continue }
            if sub.rule.needsBody {
                if message == nil { message = DBusMessage(raw, receivedAt: receivedAt) }
                guard sub.rule.matchesArguments(message!) else { continue }
            }
            switch sub.sink {
            case .raw(let handler):
                handler(DBusSignalView(raw, receivedAt: receivedAt))
                count(sub, .enqueued(remaining: 0))
            case .handler(let handler):
                if message == nil { message = DBusMessage(raw, receivedAt: receivedAt) }
                handler(message!)
                count(sub, .enqueued(remaining: 0))
            case .stream(let continuation):
                if message == nil { message = DBusMessage(raw, receivedAt: receivedAt) }
                count(sub, continuation.yield(message!))
            }
        }
    }

    private func count(_ sub: Subscription, _ result: AsyncStream<DBusSignal>.Continuation.YieldResult) {
        switch result {
        case .enqueued:
            sub.counters.delivered.add(1, ordering: .relaxed)
            delivered.add(1, ordering: .relaxed)
        case .dropped:
            sub.counters.dropped.add(1, ordering: .relaxed)
            dropped.add(1, ordering: .relaxed)
        case .terminated:
            break
        @unknown default:
            break
        }
    }

    private static func isNameOwnerChanged(_ raw: OpaquePointer) -> Bool {
        guard let member = dbus_message_get_member(raw), strcmp(member, "NameOwnerChanged") == 0,
              let sender = dbus_message_get_sender(raw), strcmp(sender, "org.freedesktop.DBus") == 0 else { return false }
        return dbus_message_is_signal(raw, "org.freedesktop.DBus", "NameOwnerChanged") != 0
    }

    private func answerPeer(_ message: DBusMessage, loop: EventLoop) {
        let reply: OutgoingMessage?
        switch message.member {
        case "Ping":
            reply = try? OutgoingMessage.methodReturn(replySerial: message.serial, destination: message.sender, body: [])
        case "GetMachineId":
            var id = ""
            if let c = dbus_get_local_machine_id() {
                id = String(cString: c)
                dbus_free(c)
            }
            reply = try? OutgoingMessage.methodReturn(replySerial: message.serial, destination: message.sender, body: [.string(id)])
        default:
            reply = OutgoingMessage.errorReply(replySerial: message.serial, destination: message.sender,
                                               error: DBusError(.unknownMethod, "org.freedesktop.DBus.Peer has no method \(message.member ?? "")"))
        }
        if let reply, !message.noReplyExpected { loop.submit(.send(reply, pending: nil)) }
    }

    func disconnected(_ reason: String) {
        let (subs, waiters) = state.withLock { s in
            s.connected = false
            s.disconnectReason = reason
            let subs = Array(s.subscriptions.values)
            s.subscriptions.removeAll()
            let waiters = s.disconnectWaiters
            s.disconnectWaiters = []
            s.methodHandler = nil
            return (subs, waiters)
        }
        for sub in subs {
            if case .stream(let continuation) = sub.sink { continuation.finish() }
        }
        for w in waiters { w.resume(returning: reason) }
    }

    // MARK: Status

    var isConnected: Bool { state.withLock { $0.connected } }

    func waitForDisconnect() async -> String {
        await withCheckedContinuation { cont in
            let reason = state.withLock { s -> String? in
                if let r = s.disconnectReason { return r }
                s.disconnectWaiters.append(cont)
                return nil
            }
            if let reason { cont.resume(returning: reason) }
        }
    }

    func countEmitted() {
        state.withLock { $0.emitted += 1 }
    }

    func statistics() -> DBusStatistics {
        state.withLock { s in
            DBusStatistics(
                signalsReceived: s.received,
                signalsDelivered: delivered.load(ordering: .relaxed),
                signalsDropped: dropped.load(ordering: .relaxed),
                signalsEmitted: s.emitted,
                methodCallsReceived: s.methodCalls)
        }
    }
}
