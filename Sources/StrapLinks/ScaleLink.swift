// SPDX-License-Identifier: MIT
import BlueZ
import DBus
import GATT
import LinkPolicy
import Normalization
import Synchronization
import Timing
import WearMetrics

/// One followed scale (Weight Scale 0x181D or Body Composition 0x181B service).
///
/// A scale advertises only while someone stands on it, indicates the measurement once a
/// central subscribes, and goes to sleep. So, unlike a strap, it is linked only right
/// after it was heard, its link is let go soon after the reading, and a scale that stops
/// answering has simply gone to sleep: no backoff grows and no adapter learns a link
/// limit from it (its failed Connects are abandoned grants, not refusals).
final class ScaleLink: FollowedLink {
    let address: String
    let signals = SignalBox()
    private let context: LinkContext
    private let status: Mutex<LinkStatus>
    private let held = Mutex<(device: DBusObjectPath?, started: [DBusObjectPath])>((nil, []))
    /// Monotonic seconds of the last advertisement heard, and who waits for the next one.
    private let ear = Mutex<(last: Double?, waiter: CheckedContinuation<Void, Never>?)>((nil, nil))
    private let readings = Mutex<(count: Int, last: Double?)>((0, nil))

    /// A scale is linked only within this long of its last advertisement.
    static let heardRecently = 5.0
    /// A link with nothing indicated is let go after this long...
    static let maximumLink: Duration = .seconds(20)
    /// ...and one that delivered a reading this long after its last indication.
    static let linger: Duration = .seconds(3)
    /// After a reading, advertisements are ignored this long (the scale is still showing it).
    static let rest = 5.0

    static func isScale(_ d: Device) -> Bool {
        d.uuids.contains(GATTNames.weightScaleService) || d.uuids.contains(GATTNames.bodyCompositionService)
    }

    init(address: String, name: String?, context: LinkContext) {
        self.address = address
        self.context = context
        var s = LinkStatus(address: address, name: name)
        s.state = .idle
        s.reason = "a scale: linked while someone stands on it"
        status = Mutex(s)
    }

    var snapshot: LinkStatus {
        var s = status.withLock { $0 }
        if let path = held.withLock({ $0.device }) { s.rssi = context.mirror.device(path: path)?.rssi }
        return s
    }

    var devicePath: DBusObjectPath? { held.withLock { $0.device } }

    private func update(_ body: (inout LinkStatus) -> Void) { status.withLock { body(&$0) } }

    func heard() {
        let waiter = ear.withLock { e -> CheckedContinuation<Void, Never>? in
            e.last = MonotonicClock.seconds()
            defer { e.waiter = nil }
            return e.waiter
        }
        waiter?.resume()
    }

    private var heardAgo: Double? { ear.withLock { $0.last.map { MonotonicClock.seconds() - $0 } } }

    /// Waits for an advertisement newer than `after`; false when cancelled.
    private func waitHeard(after: Double) async -> Bool {
        while !Task.isCancelled {
            if let last = ear.withLock({ $0.last }), last > after { return true }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let now = ear.withLock { e -> Bool in
                        if Task.isCancelled { return true }
                        if let last = e.last, last > after { return true }
                        e.waiter?.resume()
                        e.waiter = c
                        return false
                    }
                    if now { c.resume() }
                }
            } onCancel: {
                let w = ear.withLock { e -> CheckedContinuation<Void, Never>? in defer { e.waiter = nil }; return e.waiter }
                w?.resume()
            }
        }
        return false
    }

    // MARK: Loop

    func run() async {
        var quietUntil = -Double.infinity
        while !Task.isCancelled {
            update { $0.state = .idle; $0.reason = "a scale: linked while someone stands on it"; $0.adapter = nil }
            guard await waitHeard(after: quietUntil) else { return }
            guard let grant = await requestWhileHeard() else {
                if Task.isCancelled { return }
                quietUntil = MonotonicClock.seconds()
                continue
            }
            guard let adapter = context.adapters.controller(grant.adapter), (heardAgo ?? .infinity) < Self.heardRecently else {
                context.scheduler.abandoned(adapter: grant.adapter)
                quietUntil = MonotonicClock.seconds()
                continue
            }
            update { $0.state = .connecting; $0.adapter = adapter.name; $0.reason = "on \(adapter.name)" }
            context.emit(.connecting(address: address, attempt: 1))
            signals.clear()
            let before = readings.withLock { $0.count }
            switch await connectAndSubscribe(device: grant.device, adapter: adapter) {
            case .linked:
                context.scheduler.linked(address: address, adapter: grant.adapter, signals: signals)
                update { $0.state = .streaming; $0.connects += 1; $0.notify = .start; $0.lastError = nil; $0.reason = "weighing on \(adapter.name)" }
                context.emit(.connected(address: address, name: grant.device.name, adapter: adapter.name, notify: .start))
                let reason = await hold(device: grant.device.path)
                await release(disconnect: true)
                context.scheduler.released(address: address)
                if Task.isCancelled { return }
                context.emit(.disconnected(address: address, reason: reason, retryIn: 0, flapping: false))
            case .failed(let message):
                context.scheduler.abandoned(adapter: grant.adapter)
                await release(disconnect: true)
                update { $0.lastError = message }
            case .cancelled:
                context.scheduler.abandoned(adapter: grant.adapter)
                return
            }
            let delivered = readings.withLock { $0.count } > before
            quietUntil = MonotonicClock.seconds() + (delivered ? Self.rest : 0)
        }
    }

    /// Asks the scheduler for a link while the scale keeps advertising; nil when it went
    /// quiet first (or the task was cancelled).
    private func requestWhileHeard() async -> LinkScheduler.Grant? {
        let scheduler = context.scheduler
        let address = self.address
        update { $0.state = .waitingForLink; $0.reason = "someone stands on it: waiting for a link" }
        return await withTaskGroup(of: LinkScheduler.Grant?.self) { group in
            group.addTask { await scheduler.request(address: address, justDropped: false) }
            group.addTask {
                while !Task.isCancelled, (self.heardAgo ?? .infinity) < Self.heardRecently {
                    try? await Task.sleep(for: .milliseconds(500))
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // A grant that raced the cancellation still reserved room: give it back.
            for await late in group { if let late { scheduler.abandoned(adapter: late.adapter) } }
            return first
        }
    }

    private enum Outcome: Sendable {
        case linked
        case failed(String)
        case cancelled
    }

    private func connectAndSubscribe(device: Device, adapter: AdapterController) async -> Outcome {
        held.withLock { $0.device = device.path }
        let path = device.path
        let scheduler = context.scheduler
        let adapterPath = adapter.path
        let connected: Outcome = await adapter.withTurn {
            if Task.isCancelled { return .cancelled }
            guard scheduler.mayConnect(adapter: adapterPath) else { return .failed("no room on \(adapter.name)") }
            do {
                try await BlueZDevice(self.context.connection, path).connect(timeout: .seconds(15))
            } catch let error as DBusError {
                return Task.isCancelled ? .cancelled : .failed(error.message.isEmpty ? error.name : error.message)
            } catch {
                return .cancelled
            }
            return .linked
        }
        guard case .linked = connected else { return connected }
        update { $0.state = .resolving }
        try? await context.mirror.refresh(path, interface: GATTNames.device)
        do {
            _ = try await context.mirror.waitFor(timeout: .seconds(10)) { s -> GattCharacteristic? in
                s.characteristic(device: path, uuid: GATTNames.weightMeasurement)
                    ?? s.characteristic(device: path, uuid: GATTNames.bodyCompositionMeasurement)
            }
        } catch {
            return Task.isCancelled ? .cancelled : .failed("no weight or body composition measurement after connecting")
        }
        // Indications only (the spec makes both characteristics indicate-only), and
        // AcquireNotify serves notifications alone: StartNotify, the route first.
        var subscribed = 0
        for uuid in [GATTNames.weightMeasurement, GATTNames.bodyCompositionMeasurement] {
            guard let c = context.mirror.characteristic(device: path, uuid: uuid) else { continue }
            if await subscribe(c, characteristic: uuid == GATTNames.weightMeasurement ? .weightMeasurement : .bodyCompositionMeasurement) {
                subscribed += 1
            }
        }
        return subscribed > 0 ? .linked : .failed("could not subscribe to the scale's measurements")
    }

    private func subscribe(_ c: GattCharacteristic, characteristic: GATTCharacteristic) async -> Bool {
        let id = address
        context.routes.add(c.path) { [weak self] bytes, _ in self?.measurement(characteristic, Array(bytes), deviceID: id) }
        // Right after Connect the GATT client may not be ready: retry briefly.
        for _ in 0..<20 {
            do {
                try await BlueZCharacteristic(context.connection, c.path).startNotify()
                held.withLock { $0.started.append(c.path) }
                return true
            } catch {
                guard BlueZErrorKind.classify(name: error.name, message: error.message) == .notConnected, !Task.isCancelled else { break }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        context.routes.remove(c.path)
        return false
    }

    /// One indication → one `.measurement` record; a value that does not decode is
    /// counted as malformed and dropped.
    private func measurement(_ characteristic: GATTCharacteristic, _ bytes: [UInt8], deviceID: String) {
        var normalizer = WearMetricsNormalizer()
        guard let decoded = try? GATTDecoder.decode(characteristic, bytes: bytes) else { return }
        guard let record = normalizer.normalize(decoded, deviceID: deviceID, at: UTCTimestamp.now) else { return }
        readings.withLock { $0.count += 1; $0.last = MonotonicClock.seconds() }
        update { $0.reason = "weighed someone" }
        context.pipeline.sink.receive(record, kind: .measurement)
        signals.post(.yield)
    }

    /// Holds the link until the scale lets go, or briefly after its last reading, or at
    /// most `maximumLink`. Returns why it ended.
    private func hold(device: DBusObjectPath) async -> String {
        var deadline = MonotonicClock.seconds() + Self.maximumLink.seconds
        while !Task.isCancelled {
            let left = max(0, deadline - MonotonicClock.seconds())
            let signal: LinkSignal?? = await withTaskGroup(of: LinkSignal??.self) { group in
                group.addTask { .some(await self.signals.wait()) }
                group.addTask {
                    try? await Task.sleep(for: .nanoseconds(Int64(left * 1e9)))
                    return .none
                }
                let first = await group.next() ?? .none
                group.cancelAll()
                return first
            }
            guard let signal else { return "let go of the scale" }
            guard let signal else { return "stopped" }
            switch signal {
            case .yield:
                // A reading arrived: let go shortly after the last one.
                deadline = MonotonicClock.seconds() + Self.linger.seconds
            case .disconnected:
                if (try? await BlueZDevice(context.connection, device).isConnected()) == true { continue }
                return "the scale went to sleep"
            case .removed:
                if context.mirror.device(path: device) != nil { continue }
                return StrapLink.removedReason
            case .vanished:
                return StrapLink.vanishedReason
            case .adapterGone:
                return StrapLink.adapterGoneReason
            case .hangup:
                continue
            }
        }
        return "stopped"
    }

    func release(disconnect: Bool) async {
        let h = held.withLock { h -> (device: DBusObjectPath?, started: [DBusObjectPath]) in
            defer { h = (nil, []) }
            return h
        }
        for path in h.started {
            context.routes.remove(path)
            try? await BlueZCharacteristic(context.connection, path).stopNotify()
        }
        if disconnect, let device = h.device, context.mirror.device(path: device)?.connected == true {
            try? await BlueZDevice(context.connection, device).disconnect()
        }
    }

    func stopped() {
        update { $0.state = .stopped }
    }
}
