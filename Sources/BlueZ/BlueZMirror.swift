import DBus
import Synchronization

/// A live copy of bluetoothd's object tree (adapters, devices, GATT services and
/// characteristics), kept by one GetManagedObjects and the three signals that follow
/// it, with one set of match rules per connection however many devices there are.
///
/// Updates are applied on the D-Bus dispatcher thread, in the order the bus
/// delivered them, under one lock: a reader never sees half a signal, and events
/// leave in that same order.
///
/// GATT `Value` signals (one per notification) are deliberately not mirrored: see
/// `handlePropertiesChanged`.
public final class BlueZMirror: Sendable {
    public static let busName = "org.bluez"
    static let root: DBusObjectPath = "/org/bluez"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let properties = "org.freedesktop.DBus.Properties"

    /// The three rules, all limited to bluetoothd. ObjectManager signals come from
    /// `/`, so only PropertiesChanged can be narrowed to the `/org/bluez` namespace.
    public static let matchRules: [DBusMatchRule] = [
        DBusMatchRule(sender: busName, interface: objectManager, member: "InterfacesAdded"),
        DBusMatchRule(sender: busName, interface: objectManager, member: "InterfacesRemoved"),
        DBusMatchRule(sender: busName, interface: properties, member: "PropertiesChanged", pathNamespace: root),
    ]

    public let connection: DBusConnection

    enum Phase { case idle, loading, live, stopped }

    struct Waiter {
        /// Resumes the waiter and returns true when its condition holds.
        let check: @Sendable (BlueZSnapshot) -> Bool
        let fail: @Sendable (BlueZMirrorError) -> Void
        var timer: Task<Void, Never>?
    }

    struct State {
        var snapshot = BlueZSnapshot()
        var phase = Phase.idle
        /// The unique name of the bluetoothd being mirrored (or loaded).
        var owner: String?
        var present = false
        /// Updates received while a GetManagedObjects is in flight, replayed on its result.
        var buffer: [MirrorUpdate] = []
        /// Updates from a sender other than `owner` while live: a new bluetoothd that
        /// spoke before its NameOwnerChanged was processed. They seed the next load.
        var early: [MirrorUpdate] = []
        var sinks: [UInt64: EventSink] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 1
        var subscriptions: [DBusSubscription] = []
        var ownerTask: Task<Void, Never>?
        var onHeard: (@Sendable (Device) -> Void)?
    }

    private let state = Mutex(State())

    public init(connection: DBusConnection) {
        self.connection = connection
    }

    deinit {
        let (subs, task) = state.withLock { ($0.subscriptions, $0.ownerTask) }
        for s in subs { connection.unsubscribe(s) }
        task?.cancel()
    }

    // MARK: Life cycle

    /// Subscribes to InterfacesAdded, InterfacesRemoved and PropertiesChanged, then
    /// loads the tree with GetManagedObjects and follows bluetoothd's bus name.
    ///
    /// The rules are on the bus before GetManagedObjects is sent, and signals that
    /// arrive while it is in flight are replayed on its result, so no change falls in
    /// between. Returns once the first tree is mirrored (at once, with an empty
    /// mirror, when bluetoothd is not running; it is loaded when it appears).
    ///
    /// A second call does nothing; a stopped mirror is not restarted (make a new one).
    ///
    /// - Throws: the D-Bus error of a failed subscription or GetManagedObjects; the
    ///   mirror is stopped then.
    public func start() async throws(DBusError) {
        let first = state.withLock { s -> Bool in
            guard s.phase == .idle else { return false }
            s.phase = .loading
            return true
        }
        guard first else { return }
        do throws(DBusError) {
            keep(try await connection.subscribe(matching: Self.matchRules[0]) { [weak self] signal in
                self?.ingest(MirrorUpdate.interfacesAdded(signal.body), sender: signal.sender, receivedAt: signal.receivedAt)
            })
            keep(try await connection.subscribe(matching: Self.matchRules[1]) { [weak self] signal in
                self?.ingest(MirrorUpdate.interfacesRemoved(signal.body), sender: signal.sender, receivedAt: signal.receivedAt)
            })
            keep(try await connection.subscribeRaw(matching: Self.matchRules[2]) { [weak self] view in
                self?.handlePropertiesChanged(view)
            })
            if state.withLock({ $0.phase == .stopped }) { return }
            let owners = try await connection.nameOwnerChanges(of: Self.busName)
            var iterator = owners.makeAsyncIterator()
            let initial = await iterator.next() ?? nil
            if let error = await ownerChanged(to: initial),
               !error.is(.serviceUnknown), !error.is(.nameHasNoOwner) {
                throw error
            }
            let task = Task { [weak self, iterator] in
                var owners = iterator
                while let owner = await owners.next() {
                    guard let self else { return }
                    _ = await self.ownerChanged(to: owner)
                }
                // The stream ends when the connection is lost (or on stop, when this
                // does nothing): bluetoothd can no longer be seen, so it is gone.
                _ = await self?.ownerChanged(to: nil)
            }
            let keep = state.withLock { s -> Bool in
                guard s.phase != .stopped else { return false }
                s.ownerTask = task
                return true
            }
            if !keep { task.cancel() }
        } catch {
            stop()
            throw error
        }
    }

    /// Records a subscription so that `stop()` ends it, or ends it at once when the
    /// mirror was stopped while it was being made.
    private func keep(_ subscription: DBusSubscription) {
        let stopped = state.withLock { s -> Bool in
            if s.phase == .stopped { return true }
            s.subscriptions.append(subscription)
            return false
        }
        if stopped { connection.unsubscribe(subscription) }
    }

    /// Ends the subscriptions, finishes every event stream and fails pending waits
    /// with `.stopped`. The last snapshot stays readable.
    public func stop() {
        let (subs, task, sinks, waiters) = state.withLock { s in
            s.phase = .stopped
            let out = (s.subscriptions, s.ownerTask, Array(s.sinks.values), Array(s.waiters.values))
            s.subscriptions = []
            s.ownerTask = nil
            s.sinks = [:]
            s.waiters = [:]
            s.onHeard = nil
            s.buffer = []
            s.early = []
            return out
        }
        for sub in subs { connection.unsubscribe(sub) }
        task?.cancel()
        for sink in sinks { sink.finish() }
        for w in waiters {
            w.timer?.cancel()
            w.fail(.stopped)
        }
    }

    // MARK: Reading

    /// Everything mirrored now, as one consistent value.
    ///
    /// A copy shares the mirror's storage until the next signal changes it, which then
    /// copies whole tables: with thousands of devices on the bus, keep a snapshot only
    /// for a moment, and prefer `read` or the lookups below (they run under the lock
    /// and copy nothing).
    public var snapshot: BlueZSnapshot { state.withLock { $0.snapshot } }

    /// Runs `body` on the mirror as it is now, under the mirror's lock: a quick look
    /// (lookups by path or address), never a call back into the mirror.
    public func read<T: Sendable>(_ body: (BlueZSnapshot) -> T) -> T {
        state.withLock { body($0.snapshot) }
    }

    /// True while a bluetoothd is on the bus and its tree is mirrored.
    public var isBlueZPresent: Bool { state.withLock { $0.present } }

    public var adapters: [Adapter] { read { $0.adapters } }
    public func adapter(named name: String) -> Adapter? { read { $0.adapter(named: name) } }
    public var devices: [Device] { read { $0.devices } }
    public var deviceCount: Int { read { $0.deviceCount } }
    public func devices(on adapter: DBusObjectPath) -> [Device] { read { $0.devices(on: adapter) } }
    public func device(address: String) -> Device? { read { $0.device(address: address) } }
    public func devices(address: String) -> [Device] { read { $0.devices(address: address) } }
    public func device(path: DBusObjectPath) -> Device? { read { $0.device(path: path) } }
    public func services(device: DBusObjectPath) -> [GattService] { read { $0.services(device: device) } }
    public func characteristics(device: DBusObjectPath) -> [GattCharacteristic] { read { $0.characteristics(device: device) } }
    public func characteristic(device: DBusObjectPath, uuid: String) -> GattCharacteristic? {
        read { $0.characteristic(device: device, uuid: uuid) }
    }
    public func characteristic(path: DBusObjectPath) -> GattCharacteristic? { read { $0.characteristic(path: path) } }
    public func hasResolvedGATT(device: DBusObjectPath, requiring uuids: [String] = []) -> Bool {
        read { $0.hasResolvedGATT(device: device, requiring: uuids) }
    }

    /// Reads one object's interface afresh (Properties.GetAll) and applies it as if
    /// bluetoothd had signalled it.
    ///
    /// bluetoothd 5.66 does not always signal a change: in the realbluez VM neither
    /// `Connected=true` nor `ServicesResolved=true` came as PropertiesChanged after a
    /// Connect. A client that just connected refreshes the device instead of trusting a
    /// signal that may never come. Use it right after a call that changes state, not to
    /// poll: a change signalled while the reply travels can be applied before it.
    public func refresh(_ path: DBusObjectPath, interface: String) async throws(DBusError) {
        let owner = state.withLock { $0.owner }
        guard let owner else { return }
        let reply = try await connection.call(destination: owner, path: path, interface: Self.properties, member: "GetAll", [.string(interface)])
        guard let props = reply.first?.stringKeyedValue else { return }
        let kept = BlueZSnapshot.keptProperties(of: interface)
        let values = props.filter { kept.contains($0.key) }
        guard !values.isEmpty else { return }
        ingest(.changed(path, interface: interface, values, invalidated: []), sender: owner, receivedAt: nil)
    }

    // MARK: Events and waiting

    /// Properties that change with every advertising report while discovering, and
    /// with nothing else.
    public static let heardProperties: Set<String> = ["RSSI", "TxPower"]

    /// Takes the changes that only say a device was heard again (`heardProperties`)
    /// on the dispatcher thread, in place of a `deviceChanged` event on the streams.
    ///
    /// While discovering, bluetoothd sends one such signal per advertising report of
    /// every device in the room, followed or not. Through a stream each one wakes the
    /// consumer's task on a pool thread to do a lookup or two; here it costs that lookup.
    /// `handler` runs after the mirror's lock is released and must be as quick: no
    /// waiting, no call that could wait on the bus.
    public func onHeard(_ handler: (@Sendable (Device) -> Void)?) {
        state.withLock { $0.onHeard = handler }
    }

    /// Every change from now on, in order. The buffer is unbounded: mirror events come
    /// per change of an object (no notification values among them), and a dropped
    /// removal would leave a client believing in a device that is gone.
    public func events() -> AsyncStream<BlueZEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: BlueZEvent.self, bufferingPolicy: .unbounded)
        let id = addSink(.plain(continuation))
        // No onTermination that takes the lock to remove the sink: events are yielded
        // under the lock, and a consumer's cancellation runs onTermination while
        // holding its task's status lock, which the yield may need to resume it (a
        // deadlock seen in the tests). `publish` drops a sink once its yield reports
        // the stream terminated.
        if id == nil { continuation.finish() }
        return stream
    }

    /// As `events()`, each event with the wall-clock time its signal was read off the bus
    /// (nil for changes the mirror made itself: a load, a refresh, bluetoothd leaving).
    /// A record made from an event (an advertised heart rate) carries that time, not the
    /// time a busy consumer got round to it.
    public func timedEvents() -> AsyncStream<TimedBlueZEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: TimedBlueZEvent.self, bufferingPolicy: .unbounded)
        if addSink(.timed(continuation)) == nil { continuation.finish() }
        return stream
    }

    private func addSink(_ sink: EventSink) -> UInt64? {
        state.withLock { s -> UInt64? in
            guard s.phase != .stopped else { return nil }
            let id = s.nextID
            s.nextID += 1
            s.sinks[id] = sink
            return id
        }
    }

    /// Returns the first non-nil result of `condition`, evaluated now and again after
    /// every change to the mirror (never on a timer).
    ///
    /// The condition runs under the mirror's lock, often on the D-Bus dispatcher
    /// thread: it must be a quick look at the snapshot it is given, and must not call
    /// back into the mirror (the lock is not reentrant).
    public func waitFor<T: Sendable>(timeout: Duration = .seconds(30),
                                     _ condition: @escaping @Sendable (BlueZSnapshot) -> T?) async throws(BlueZMirrorError) -> T {
        let id = state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            return id
        }
        let result: Result<T, BlueZMirrorError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (cont: CheckedContinuation<Result<T, BlueZMirrorError>, Never>) in
                let waiter = Waiter(
                    check: { snapshot in
                        guard let value = condition(snapshot) else { return false }
                        cont.resume(returning: .success(value))
                        return true
                    },
                    fail: { cont.resume(returning: .failure($0)) })
                let immediate = state.withLock { s -> BlueZMirrorError?? in
                    if s.phase == .stopped { return .some(.stopped) }
                    if waiter.check(s.snapshot) { return .some(nil) }
                    var w = waiter
                    w.timer = Task { [weak self] in
                        try? await Task.sleep(for: timeout)
                        guard !Task.isCancelled else { return }
                        self?.expire(id, .timedOut)
                    }
                    s.waiters[id] = w
                    return nil
                }
                if case .some(.some(let error)) = immediate { waiter.fail(error) }
                if Task.isCancelled { expire(id, .cancelled) }
            }
        } onCancel: {
            expire(id, .cancelled)
        }
        return try result.get()
    }

    /// `waitFor` for a yes/no condition.
    public func waitUntil(timeout: Duration = .seconds(30),
                          _ condition: @escaping @Sendable (BlueZSnapshot) -> Bool) async throws(BlueZMirrorError) {
        _ = try await waitFor(timeout: timeout) { condition($0) ? true : nil }
    }

    private func expire(_ id: UInt64, _ error: BlueZMirrorError) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.fail(error)
    }

    // MARK: Signals (dispatcher thread)

    /// PropertiesChanged is also the signal of every GATT notification (`Value`), so
    /// it is taken raw: a signal whose only change is `Value` is dropped after one
    /// scan of its keys, without decoding (the mirror keeps no values). Anything
    /// else is decoded and reduced to the properties the mirror keeps, so a
    /// `Notifying` that bluetoothd flushes in the same signal as a `Value` (it sends
    /// whatever of the object is pending in one main-loop iteration) is never missed.
    private func handlePropertiesChanged(_ view: DBusSignalView) {
        if view.changes(only: "Value") { return }
        let signal = view.decoded()
        ingest(MirrorUpdate.propertiesChanged(path: signal.path, signal.body), sender: signal.sender, receivedAt: view.receivedAt)
    }

    private func ingest(_ update: MirrorUpdate?, sender: String?, receivedAt: Int64?) {
        guard let update else { return }
        let heard = state.withLock { s -> (handler: @Sendable (Device) -> Void, devices: [Device])? in
            switch s.phase {
            case .idle, .stopped:
                return nil
            case .loading:
                s.buffer.append(update)
                return nil
            case .live:
                if let sender, let owner = s.owner, sender != owner {
                    s.early.append(update)
                    return nil
                }
                var events: [BlueZEvent] = []
                update.apply(to: &s.snapshot, into: &events)
                guard let handler = s.onHeard else {
                    Self.publish(events, &s, receivedAt: receivedAt)
                    return nil
                }
                var devices: [Device] = []
                events.removeAll { event in
                    guard case let .deviceChanged(d, changed) = event, changed.isSubset(of: Self.heardProperties) else { return false }
                    devices.append(d)
                    return true
                }
                if events.isEmpty, !devices.isEmpty { Self.checkWaiters(&s) }
                Self.publish(events, &s, receivedAt: receivedAt)
                return devices.isEmpty ? nil : (handler, devices)
            }
        }
        if let heard { for d in heard.devices { heard.handler(d) } }
    }

    /// Yields under the lock so that events from different threads (dispatcher,
    /// owner task) can never overtake each other; drops the sinks whose consumers
    /// have gone.
    private static func publish(_ events: [BlueZEvent], _ s: inout State, receivedAt: Int64? = nil) {
        guard !events.isEmpty else { return }
        var gone: [UInt64] = []
        for event in events {
            for (id, sink) in s.sinks where !sink.yield(event, receivedAt: receivedAt) {
                gone.append(id)
            }
        }
        for id in gone { s.sinks[id] = nil }
        checkWaiters(&s)
    }

    /// Every change is a chance for a waiter's condition to hold.
    private static func checkWaiters(_ s: inout State) {
        guard !s.waiters.isEmpty else { return }
        for (id, waiter) in s.waiters where waiter.check(s.snapshot) {
            waiter.timer?.cancel()
            s.waiters[id] = nil
        }
    }

    // MARK: bluetoothd coming and going (owner task)

    /// Called for the initial owner and then for every change, one at a time. A new
    /// owner (a restart) empties the mirror, announces `bluezVanished`, and loads
    /// the new daemon's tree, ending with `bluezAppeared`.
    private func ownerChanged(to newOwner: String?) async -> DBusError? {
        let proceed = state.withLock { s -> Bool in
            guard s.phase != .stopped, s.owner != newOwner else { return false }
            if s.phase == .live {
                s.snapshot = BlueZSnapshot()
                s.buffer = s.early
                s.early = []
                let wasPresent = s.present
                s.present = false
                if wasPresent { Self.publish([.bluezVanished], &s) }
            }
            s.phase = .loading
            s.owner = newOwner
            return newOwner != nil
        }
        guard proceed, let owner = newOwner else { return nil }
        return await load(from: owner)
    }

    private func load(from owner: String) async -> DBusError? {
        let reply: [DBusValue]
        do {
            // Addressed to the unique name: the answer comes from the daemon whose
            // signals are being buffered, never from a successor.
            reply = try await connection.call(destination: owner, path: .root, interface: Self.objectManager, member: "GetManagedObjects")
        } catch {
            state.withLock { s in
                guard s.phase == .loading, s.owner == owner else { return }
                // Mirror whatever was signalled, and let the next owner change reload.
                var events: [BlueZEvent] = []
                var snapshot = BlueZSnapshot()
                for update in s.buffer { update.apply(to: &snapshot, into: &events) }
                s.buffer = []
                s.snapshot = snapshot
                s.phase = .live
                Self.publish(events, &s)
            }
            return error
        }
        var objects: [(DBusObjectPath, [String: [String: DBusValue]])] = []
        for entry in reply.first?.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPathValue, path.isDescendant(of: Self.root) else { continue }
            let interfaces = MirrorUpdate.keptInterfaces(entry.value)
            if !interfaces.isEmpty { objects.append((path, interfaces)) }
        }
        // Parents before children, so characteristics find their service's device.
        objects.sort { $0.0 < $1.0 }
        state.withLock { s in
            guard s.phase == .loading, s.owner == owner else { return }
            var events: [BlueZEvent] = []
            var snapshot = BlueZSnapshot()
            for (path, interfaces) in objects { snapshot.interfacesAdded(path, interfaces, into: &events) }
            // Signals that crossed the reply: older ones repeat what the reply already
            // shows (harmless), newer ones bring it up to date.
            for update in s.buffer { update.apply(to: &snapshot, into: &events) }
            s.buffer = []
            s.snapshot = snapshot
            s.phase = .live
            s.present = true
            events.append(.bluezAppeared)
            Self.publish(events, &s)
        }
        return nil
    }
}

/// A mirror event with the wall-clock time (milliseconds since 1970) the signal that
/// caused it was read off the bus; nil when the mirror made the change itself.
public struct TimedBlueZEvent: Sendable {
    public var event: BlueZEvent
    public var receivedAt: Int64?
}

/// One consumer of mirror events.
enum EventSink: Sendable {
    case plain(AsyncStream<BlueZEvent>.Continuation)
    case timed(AsyncStream<TimedBlueZEvent>.Continuation)

    /// False once the consumer has gone.
    func yield(_ event: BlueZEvent, receivedAt: Int64?) -> Bool {
        let result: Bool
        switch self {
        case .plain(let c):
            if case .terminated = c.yield(event) { result = false } else { result = true }
        case .timed(let c):
            if case .terminated = c.yield(TimedBlueZEvent(event: event, receivedAt: receivedAt)) { result = false } else { result = true }
        }
        return result
    }

    func finish() {
        switch self {
        case .plain(let c): c.finish()
        case .timed(let c): c.finish()
        }
    }
}
