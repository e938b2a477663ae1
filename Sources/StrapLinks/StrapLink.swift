// SPDX-License-Identifier: MIT
import BlueZ
import DBus
import NotifySocket
import GATT
import LinkPolicy
import Synchronization
import WearMetrics
import Timing

/// One followed strap: connects it, subscribes, streams, and after any loss starts over
/// with a pace that depends on what went wrong.
///
/// The loop is deliberately linear (wait for the device, take the adapter's turn,
/// Connect, wait for the GATT objects, subscribe, stream until something ends the link)
/// so that every failure lands in one place that decides the delay.
final class StrapLink: Sendable {
    let address: String
    let signals = SignalBox()
    private let context: LinkContext
    private let status: Mutex<LinkStatus>
    /// What is held on bluetoothd for this link, for clean-up on shutdown.
    private let held = Mutex<Held>(Held())

    struct Held {
        var device: DBusObjectPath?
        var subscriptions: [Subscription] = []
    }

    enum Subscription: Sendable {
        case acquired(DBusObjectPath, NotifySocketReader.Registration)
        case started(DBusObjectPath)

        var path: DBusObjectPath {
            switch self {
            case .acquired(let p, _), .started(let p): p
            }
        }
    }

    static let vanishedReason = "bluetoothd left the bus"
    static let removedReason = "device removed"
    static let adapterGoneReason = "its adapter went away or off"

    struct LinkLost: Error {
        var reason: String
    }

    init(address: String, name: String?, context: LinkContext) {
        self.address = address
        self.context = context
        self.status = Mutex(LinkStatus(address: address, name: name))
    }

    var snapshot: LinkStatus {
        var s = status.withLock { $0 }
        s.counters = context.pipeline.counters(deviceID: address)
        if let path = held.withLock({ $0.device }) { s.rssi = context.mirror.device(path: path)?.rssi }
        if s.state == .waiting, let (state, reason) = context.scheduler.explain(address) {
            s.state = state
            s.reason = s.reason.map { $0 + "; " + reason } ?? reason
        }
        if s.state != .streaming, s.state != .connecting, s.state != .resolving,
           let heard = s.counters.lastAdvertisedAt, MonotonicClock.seconds() - heard < 5 {
            s.state = .advertised
            s.reason = (s.reason.map { $0 + "; " } ?? "") + "heart rate from its advertisements"
        }
        return s
    }

    /// The device path this link is using now, to route mirror events to it.
    var devicePath: DBusObjectPath? { held.withLock { $0.device } }

    private func update(_ body: (inout LinkStatus) -> Void) { status.withLock { body(&$0) } }

    // MARK: Loop

    func run() async {
        var tracker = ReconnectTracker(policy: context.configuration.backoff, stableAfter: context.configuration.stableAfter,
                                       seed: context.configuration.jitterSeed ^ UInt64(truncatingIfNeeded: address.hashValue))
        var attempt = 0
        var justDropped = false
        while !Task.isCancelled {
            update { $0.state = .waiting; $0.reason = nil; $0.backingOffUntil = nil }
            guard let grant = await context.scheduler.request(address: address, justDropped: justDropped) else { return }
            justDropped = false
            guard let adapter = context.adapters.controller(grant.adapter) else {
                context.scheduler.abandoned(adapter: grant.adapter)
                continue
            }
            let device = grant.device
            attempt += 1
            update { $0.state = .connecting; $0.adapter = adapter.name; $0.name = device.name ?? $0.name; $0.reason = "on \(adapter.name)" }
            context.emit(.connecting(address: address, attempt: attempt))
            signals.clear()
            let outcome = await connectAndSubscribe(device: device, adapter: adapter)
            switch outcome {
            case .refused(let kind, let message):
                // Only the Connect call's own failure says something about the adapter's room.
                let verdict = context.scheduler.refused(address: address, adapter: grant.adapter, kind: kind)
                await failed(kind, message, verdict: verdict, adapter: adapter, tracker: &tracker)
                await release(disconnect: kind == .timeout)
                if !(await backOff(tracker: &tracker, kind: kind, message: message, verdict: verdict, adapter: adapter.name)) { return }
            case .failure(let kind, let message):
                context.scheduler.abandoned(adapter: grant.adapter)
                await failed(kind, message, verdict: .notCapacity, adapter: adapter, tracker: &tracker)
                await release(disconnect: kind == .timeout || kind == .gattMissing)
                if !(await backOff(tracker: &tracker, kind: kind, message: message, verdict: .notCapacity, adapter: adapter.name)) { return }
            case .cancelled:
                context.scheduler.abandoned(adapter: grant.adapter)
                return
            case .noRoom:
                context.scheduler.abandoned(adapter: grant.adapter)
                attempt -= 1
            case .streaming(let method):
                attempt = 0
                context.scheduler.linked(address: address, adapter: grant.adapter, signals: signals)
                await adapter.noteConnected()
                tracker.linkUp(at: MonotonicClock.seconds())
                update { $0.state = .streaming; $0.connects += 1; $0.notify = method; $0.lastError = nil; $0.reason = "linked on \(adapter.name)" }
                context.emit(.connected(address: address, name: device.name, adapter: adapter.name, notify: method))
                let before = context.pipeline.counters(deviceID: address).heartRate
                let end = await stream(device: device.path)
                guard let end else {
                    // Cancelled: the manager releases what is held.
                    context.scheduler.released(address: address)
                    return
                }
                // Let go first: notifications still queued on the sockets are delivered
                // while the link's HRV window is open.
                if case .yielded = end { await release(disconnect: true) } else { await release(disconnect: false) }
                let delivered = context.pipeline.counters(deviceID: address).heartRate > before
                context.pipeline.disconnected(deviceID: address)
                if case .yielded(let to) = end {
                    context.scheduler.released(address: address)
                    tracker.linkDown(at: MonotonicClock.seconds(), delivered: true, deviceFault: false)
                    update { $0.state = .waiting; $0.reason = "gave its link to \(to), which cannot be heard by advertisement" }
                    context.emit(.disconnected(address: address, reason: "gave its link to \(to)", retryIn: 0, flapping: false))
                    continue
                }
                let reason = end.reason
                let flap = tracker.linkDown(at: MonotonicClock.seconds(), delivered: delivered,
                                            deviceFault: ![Self.vanishedReason, Self.removedReason, Self.adapterGoneReason].contains(reason))
                let flapping = tracker.isFlapping(now: MonotonicClock.seconds())
                let delay = flap ? tracker.nextDelay(now: MonotonicClock.seconds()) : 0
                justDropped = delivered
                update {
                    $0.state = .backingOff; $0.flapping = flapping; $0.lastError = reason
                    $0.reason = reason + (delay > 0 ? ", brief links: retrying in \(Int(delay.rounded(.up))) s" : "")
                    $0.backingOffUntil = MonotonicClock.seconds() + delay
                }
                context.emit(.disconnected(address: address, reason: reason, retryIn: delay, flapping: flapping))
                context.scheduler.released(address: address)
                if !(await sleep(delay)) { return }
            }
        }
    }

    private func failed(_ kind: ConnectFailureKind, _ message: String, verdict: LinkLimit.Verdict, adapter: AdapterController,
                        tracker: inout ReconnectTracker) async {
        // A refusal at the adapter's limit is not the strap's fault, nor a stalled
        // adapter: no backoff grows and no recovery is counted.
        switch verdict {
        case .notCapacity:
            tracker.failed(kind)
            await adapter.noteFailure(kind)
        case .repeated:
            tracker.failed(kind)
        case .suspect, .learned:
            break
        }
        update { $0.connectFailures += 1; $0.lastError = "\(kind.rawValue): \(message)" }
    }

    /// Waits before the next attempt; false when cancelled.
    private func backOff(tracker: inout ReconnectTracker, kind: ConnectFailureKind, message: String, verdict: LinkLimit.Verdict,
                         adapter: String) async -> Bool {
        let delay: Double
        let reason: String
        switch verdict {
        case .notCapacity, .repeated:
            delay = tracker.nextDelay(now: MonotonicClock.seconds())
            reason = "backing off after \(kind.rawValue) on \(adapter)"
        case .suspect:
            delay = 1
            reason = "\(adapter) refused a link (\(kind.rawValue)); it may be full"
        case .learned(let n):
            delay = 1
            reason = "\(adapter) refuses links beyond \(n)"
        }
        let until = MonotonicClock.seconds() + delay
        // A refusal at an adapter's limit is the strap waiting for room, not a failure.
        let state: LinkState
        switch verdict {
        case .notCapacity, .repeated: state = .backingOff
        case .suspect, .learned: state = .waitingForLink
        }
        update { $0.state = state; $0.reason = reason; $0.backingOffUntil = until }
        context.emit(.connectFailed(address: address, kind: kind, message: message, retryIn: delay))
        return await sleep(delay)
    }

    /// Sleeps unless cancelled; false when cancelled.
    private func sleep(_ seconds: Double) async -> Bool {
        guard seconds > 0 else { return !Task.isCancelled }
        do {
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            return true
        } catch {
            return false
        }
    }

    enum Outcome: Sendable {
        case streaming(NotifyMethod)
        /// Connect itself failed.
        case refused(ConnectFailureKind, String)
        /// A step after Connect failed.
        case failure(ConnectFailureKind, String)
        case cancelled
        /// The adapter filled up while this connect waited for its turn.
        case noRoom
    }

    /// How a streaming link ended.
    enum End: Sendable {
        case lost(String)
        case yielded(to: String)

        var reason: String {
            switch self {
            case .lost(let r): r
            case .yielded(let to): "gave its link to \(to)"
            }
        }
    }

    // MARK: Connect

    private func connectAndSubscribe(device: Device, adapter: AdapterController) async -> Outcome {
        held.withLock { $0.device = device.path }
        let path = device.path
        let scheduler = context.scheduler
        let adapterPath = adapter.path
        let outcome: Outcome = await adapter.withTurn {
            if Task.isCancelled { return .cancelled }
            guard scheduler.mayConnect(adapter: adapterPath) else { return .noRoom }
            do {
                try await BlueZDevice(self.context.connection, path).connect(timeout: self.context.configuration.connectTimeout)
            } catch let error as DBusError {
                if Task.isCancelled { return .cancelled }
                let kind = ConnectFailureKind.classify(errorName: error.name, message: error.message)
                return .refused(kind, error.message.isEmpty ? error.name : error.message)
            } catch {
                return .cancelled
            }
            self.update { $0.state = .resolving }
            try? await self.context.mirror.refresh(path, interface: GATTNames.device)
            return await self.resolveAndSubscribe(path)
        }
        return outcome
    }

    private enum Resolve: Sendable {
        case ready(GattCharacteristic)
        case resolvedWithout
        case lost
    }

    /// Waits for the Heart Rate Measurement object. ServicesResolved is only a hint:
    /// the objects can arrive after it, so a missing characteristic is given a grace
    /// period before the cache is called stale.
    private func resolveAndSubscribe(_ path: DBusObjectPath) async -> Outcome {
        let mirror = context.mirror
        @Sendable func look(_ s: BlueZSnapshot, acceptResolved: Bool) -> Resolve? {
            guard let d = s.device(path: path), d.connected || s.characteristic(device: path, uuid: GATTNames.heartRateMeasurement) != nil else {
                return .lost
            }
            if let c = s.characteristic(device: path, uuid: GATTNames.heartRateMeasurement) { return .ready(c) }
            if acceptResolved, d.servicesResolved { return .resolvedWithout }
            return nil
        }
        var result: Resolve
        do {
            result = try await mirror.waitFor(timeout: context.configuration.resolveTimeout) { look($0, acceptResolved: true) }
            if case .resolvedWithout = result {
                result = try await mirror.waitFor(timeout: context.configuration.resolveGrace) { look($0, acceptResolved: false) }
            }
        } catch {
            if error == .cancelled || Task.isCancelled { return .cancelled }
            if let d = mirror.device(path: path), d.connected, d.servicesResolved {
                return await staleCache(path)
            }
            return .failure(.timeout, "GATT services not resolved in time")
        }
        switch result {
        case .lost:
            return .failure(.abortByLocal, "link lost while resolving services")
        case .resolvedWithout:
            return await staleCache(path)
        case .ready(let hr):
            return await subscribeAll(device: path, heartRate: hr)
        }
    }

    private func staleCache(_ path: DBusObjectPath) async -> Outcome {
        context.emit(.staleCache(address: address))
        try? await BlueZDevice(context.connection, path).disconnect()
        if let adapter = path.parent {
            try? await BlueZAdapter(context.connection, adapter).removeDevice(path)
        }
        return .failure(.gattMissing, "Heart Rate Measurement missing after services resolved")
    }

    // MARK: Subscribe

    private func subscribeAll(device: DBusObjectPath, heartRate: GattCharacteristic) async -> Outcome {
        let d = context.mirror.device(path: device)
        let method = context.configuration.notifyMethod(address: address, name: d?.name)
        var used: NotifyMethod?
        // Right after Connect the GATT client may not be ready yet (bluetoothd answers
        // "Not connected" although Connect succeeded): retry while the link is up.
        for attempt in 0..<20 where used == nil {
            do {
                used = try await subscribeHeartRate(heartRate, preferred: method)
            } catch let lost as LinkLost {
                guard attempt < 19, await isConnectedNow(device) else { return .failure(.abortByLocal, lost.reason) }
                try? await Task.sleep(for: .milliseconds(250))
                if Task.isCancelled { return .cancelled }
            } catch {
                return .failure(.other, "\(error)")
            }
        }
        guard let used else { return .failure(.abortByLocal, "could not subscribe") }
        await readDeviceInformation(device)
        await subscribeBattery(device)
        return .streaming(used)
    }

    /// AcquireNotify first (unless configured otherwise), StartNotify when the
    /// characteristic or BlueZ refuses it.
    func subscribeHeartRate(_ c: GattCharacteristic, preferred: NotifyMethod) async throws -> NotifyMethod {
        let pipeline = context.pipeline
        let id = address
        let indicateOnly = c.flags.contains("indicate") && !c.flags.contains("notify")
        if preferred == .acquire, !indicateOnly {
            // bluetoothd notices a closed socket of ours a moment after we close it (on its
            // next poll); until then it answers "Notify acquired". Wait for it, then retry.
            for _ in 0..<3 {
                do {
                    return try await acquire(c, pipeline: pipeline, id: id)
                } catch let error as DBusError {
                    let kind = BlueZErrorKind.classify(name: error.name, message: error.message)
                    if kind == .notConnected { throw LinkLost(reason: "not connected") }
                    guard kind == .notifyAcquired else { break }
                    let path = c.path
                    _ = try? await context.mirror.waitUntil(timeout: .seconds(2)) { s in
                        s.characteristic(path: path)?.notifyAcquired != true
                    }
                }
            }
            // NotSupported, NotPermitted, InProgress (a StartNotify session of ours), Failed:
            // fall back to StartNotify.
        }
        context.routes.add(c.path) { bytes, arrival in pipeline.heartRate(deviceID: id, bytes: bytes, arrival: arrival) }
        do {
            try await BlueZCharacteristic(context.connection, c.path).startNotify()
        } catch {
            context.routes.remove(c.path)
            if BlueZErrorKind.classify(name: error.name, message: error.message) == .notConnected { throw LinkLost(reason: "not connected") }
            throw error
        }
        held.withLock { $0.subscriptions.append(.started(c.path)) }
        return .start
    }

    private func acquire(_ c: GattCharacteristic, pipeline: RecordPipeline, id: String) async throws -> NotifyMethod {
        guard let fd = try await BlueZCharacteristic(context.connection, c.path).acquireNotify() else {
            throw LinkLost(reason: "AcquireNotify returned no socket")
        }
        let signals = self.signals
        let path = c.path
        // Stamped with the kernel's arrival time: the reader may hand a datagram over up
        // to its gathering window later.
        guard let registration = context.reader.add(fd, onArrival: { bytes, arrival in
            pipeline.heartRate(deviceID: id, bytes: bytes, arrival: UTCTimestamp(millisecondsSince1970: arrival / 1_000_000), hold: true)
        }, onHangup: {
            signals.post(.hangup(characteristic: path))
        }) else { throw LinkLost(reason: "notify reader stopped") }
        held.withLock { $0.subscriptions.append(.acquired(c.path, registration)) }
        return .acquire
    }

    /// Device Information strings and Body Sensor Location, once per connection.
    private func readDeviceInformation(_ device: DBusObjectPath) async {
        let wanted: [GATTCharacteristic] = [.manufacturerName, .modelNumber, .serialNumber, .firmwareRevision,
                                            .hardwareRevision, .softwareRevision, .bodySensorLocation]
        var decoded: [DecodedCharacteristic] = []
        for id in wanted {
            guard let c = context.mirror.characteristic(device: device, uuid: id.uuidString), c.flags.contains("read") else { continue }
            guard let bytes = try? await readValue(c.path) else { continue }
            if let value = try? GATTDecoder.decode(id, bytes: bytes) { decoded.append(value) }
        }
        context.pipeline.deviceInformation(deviceID: address, decoded)
    }

    private func readValue(_ path: DBusObjectPath) async throws(DBusError) -> [UInt8] {
        try await BlueZCharacteristic(context.connection, path).readValue()
    }

    /// 0x2A19 notifications; else a read every few minutes; else BlueZ's Battery1 (its
    /// battery plugin hides 0x180F from clients), which the manager forwards from the mirror.
    private func subscribeBattery(_ device: DBusObjectPath) async {
        let pipeline = context.pipeline
        let id = address
        if let c = context.mirror.characteristic(device: device, uuid: GATTNames.batteryLevel) {
            if c.flags.contains("read"), let bytes = try? await readValue(c.path), let first = bytes.first {
                pipeline.battery(deviceID: id, percent: min(first, 100))
            }
            if c.flags.contains("notify") {
                context.routes.add(c.path) { bytes, _ in
                    if let first = bytes.first { pipeline.battery(deviceID: id, percent: min(first, 100)) }
                }
                if (try? await BlueZCharacteristic(context.connection, c.path).startNotify()) != nil {
                    held.withLock { $0.subscriptions.append(.started(c.path)) }
                    return
                }
                context.routes.remove(c.path)
            }
            if c.flags.contains("read") {
                startBatteryPolling(c.path)
            }
            return
        }
        if let percent = context.mirror.device(path: device)?.batteryPercentage {
            pipeline.battery(deviceID: id, percent: percent)
        }
    }

    private let batteryPoll = Mutex<Task<Void, Never>?>(nil)

    private func startBatteryPolling(_ path: DBusObjectPath) {
        let interval = context.configuration.batteryReadInterval
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                if let bytes = try? await self.readValue(path), let first = bytes.first {
                    self.context.pipeline.battery(deviceID: self.address, percent: min(first, 100))
                }
            }
        }
        batteryPoll.withLock { $0?.cancel(); $0 = task }
    }

    // MARK: Streaming

    /// Waits for the end of the link. A hung-up notification socket on a link that is
    /// still up is re-acquired in place. Returns how it ended, or nil when cancelled.
    private func stream(device: DBusObjectPath) async -> End? {
        while true {
            guard let signal = await signals.wait() else { return nil }
            // Signals are checked against the mirror, which is updated before any event
            // leaves it: a late signal from an earlier session must not end this one.
            switch signal {
            case .disconnected:
                if await isConnectedNow(device) { continue }
                return .lost("link lost")
            case .removed:
                if context.mirror.device(path: device) != nil { continue }
                return .lost(Self.removedReason)
            case .vanished:
                return .lost(Self.vanishedReason)
            case .yield:
                guard let to = context.scheduler.yieldingTo(address) else { continue }
                return .yielded(to: to)
            case .adapterGone:
                return .lost(Self.adapterGoneReason)
            case .hangup(let characteristic):
                let path = characteristic
                let known = held.withLock { h -> Bool in
                    let had = h.subscriptions.contains { if case .acquired(let p, _) = $0 { return p == path } else { return false } }
                    h.subscriptions.removeAll { $0.path == path }
                    return had
                }
                guard known else { continue }
                // The socket closes before bluetoothd's signals say why: give the mirror a
                // moment to show a disconnect (then this is a link loss) or the released
                // socket (then the link is fine and the socket is taken again).
                let why = try? await context.mirror.waitFor(timeout: .seconds(3)) { s -> Bool? in
                    guard let d = s.device(path: device), d.connected else { return false }
                    if s.characteristic(path: path)?.notifyAcquired == false { return true }
                    return nil
                }
                if why == false { return .lost("link lost") }
                guard context.mirror.device(path: device)?.connected == true else { return .lost("link lost") }
                guard let c = context.mirror.characteristic(path: path) else {
                    return .lost("notification socket closed and the characteristic is gone")
                }
                do {
                    let method = try await subscribeHeartRate(c, preferred: .acquire)
                    context.emit(.resubscribed(address: address, notify: method))
                    update { $0.notify = method }
                } catch is LinkLost {
                    return .lost("link lost")
                } catch {
                    return .lost("notification socket closed and could not be re-acquired: \(error)")
                }
            }
        }
    }

    /// Asks bluetoothd itself (not the mirror) whether the device is connected.
    private func isConnectedNow(_ device: DBusObjectPath) async -> Bool {
        (try? await BlueZDevice(context.connection, device).isConnected()) == true
    }

    // MARK: Clean-up

    /// Lets go of what this link holds on bluetoothd: notification sessions and (when
    /// asked) the connection itself.
    func release(disconnect: Bool) async {
        batteryPoll.withLock { $0?.cancel(); $0 = nil }
        let h = held.withLock { h -> Held in
            defer { h = Held() }
            return h
        }
        for s in h.subscriptions {
            switch s {
            case .acquired(_, let registration):
                await context.reader.remove(registration)
            case .started(let path):
                context.routes.remove(path)
                // After a link loss the session stays registered with bluetoothd
                // (Cache=always); StopNotify keeps nothing dangling.
                try? await BlueZCharacteristic(context.connection, path).stopNotify()
            }
        }
        if disconnect, let device = h.device {
            try? await BlueZDevice(context.connection, device).disconnect()
        }
    }

    func stopped() {
        update { $0.state = .stopped }
    }
}
