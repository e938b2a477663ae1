import DBus
import Timing

extension SimulatedBlueZ {
    /// Starts the strap's notification clock for this link: `rate` Heart Rate
    /// notifications per second on average, each strap on its own `ArrivalClock` (own
    /// phase, intervals jittered like heart beats), one notification per wake-up, so that
    /// no two straps' notifications are ever sent as one batch. Deadlines are absolute
    /// (the sum of the intervals), so the average holds at thousands per second; a pump
    /// that fell more than a second behind (a stalled machine) starts again from now
    /// instead of sending the backlog in a burst.
    func startPump(_ device: SimDevice, generation g: Int) {
        device.pump?.cancel()
        let i = device.adapter, strap = device.strap, address = straps[strap].identity.address, epoch = device.linkEpoch
        if straps[strap].identity.model == .scale {
            startScalePump(device, generation: g)
            return
        }
        let seed = SeededRandom(seed: straps[strap].identity.seed).derived("arrivals", epoch)
        device.pump = Task { [weak self] in
            let clock = ContinuousClock()
            var arrivals = ArrivalClock(rate: await self?.pumpRate(strap) ?? 1, seed: seed)
            var next = clock.now + .seconds(arrivals.phase())
            while !Task.isCancelled {
                try? await Task.sleep(until: next, tolerance: .zero, clock: clock)
                guard let self, !Task.isCancelled else { return }
                let r = await self.pumpRate(strap)
                if r != arrivals.rate {
                    arrivals.setRate(r)
                    next = clock.now + .seconds(arrivals.phase())
                    continue
                }
                let alive = await self.deliverHeartRate(g, i, address, epoch: epoch, count: 1)
                if !alive { return }
                next += .seconds(arrivals.nextInterval())
                if clock.now - next > .seconds(1) { next = clock.now }
            }
        }
    }

    /// The notification rate of strap `s`: its own when it floods, else the common one.
    func pumpRate(_ s: Int) -> Double { straps[s].floodRate ?? rate }

    /// Sends `count` Heart Rate notifications (and a Battery Level one when the
    /// percentage changed). Returns false when the link this pump served is gone.
    func deliverHeartRate(_ g: Int, _ i: Int, _ address: String, epoch: Int, count: Int) -> Bool {
        guard let (d, _, device) = try? self.device(g, i, address), device.connected, device.linkEpoch == epoch else { return false }
        guard device.servicesResolved, let hr = device.heartRateCharacteristic else { return true }
        let s = device.strap
        var advanced = false
        // A strap off the skin sends nothing (a real H10 stops notifying).
        for _ in 0..<(straps[s].worn ? count : 0) {
            guard let sessions = device.sessions[hr], !sessions.isEmpty else { break }
            let measurement = straps[s].stream.next(interval: 1 / rate)
            advanced = true
            var bytes = measurement.bytes
            let malformed = straps[s].malformedRNG.chance(malformedRate)
            if malformed {
                bytes = MalformedHeartRatePayload.make(&straps[s].malformedRNG, heartRate: UInt8(truncatingIfNeeded: measurement.heartRate))
            } else if straps[s].floodBytes > bytes.count {
                // RR intervals are the last field: set the flag, append 800-tick values.
                bytes[0] |= 0x10
                while bytes.count + 2 <= straps[s].floodBytes { bytes += [0x20, 0x03] }
            }
            let sequence = straps[s].heartRateSequence
            if send(bytes, device: device, characteristic: hr, sessions: sessions, in: d, sequence: sequence, malformed: malformed) {
                straps[s].heartRateSequence += 1
            }
        }
        if advanced {
            straps[s].clockByPump = true
            straps[s].clockAt = MonotonicClock.seconds() * 1000
        }
        let level = straps[s].stream.batteryPercent
        if device.lastBattery != level {
            device.lastBattery = level
            if device.battery1 {
                d.server.setProperty(device.path, "org.bluez.Battery1", "Percentage", .byte(level))
            }
            if let bc = device.batteryCharacteristic, let sessions = device.sessions[bc], !sessions.isEmpty {
                if send([level], device: device, characteristic: bc, sessions: sessions, in: d,
                        sequence: straps[s].batterySequence, malformed: false) {
                    straps[s].batterySequence += 1
                }
            }
        }
        return true
    }

    /// One notification through whichever path the characteristic has: the
    /// acquired socket (one datagram) or a `Value` PropertiesChanged. Logged only
    /// when it actually left (a full socket buffer drops it, as bluetoothd does).
    func send(_ bytes: [UInt8], device: SimDevice, characteristic cp: DBusObjectPath, sessions: NotifySessions,
              in d: Daemon, sequence: Int, malformed: Bool) -> Bool {
        let delivery: PayloadRecord.Delivery
        if let socket = sessions.acquired {
            switch socket.send(bytes) {
            case .sent:
                delivery = .acquire
            case .wouldBlock:
                droppedNotifications += 1
                return false
            case .closed:
                releaseAcquired(device, characteristic: cp, in: d)
                return false
            }
        } else {
            d.server.setProperties(cp, Self.characteristicInterface, [("Value", .bytes(bytes))], force: true)
            delivery = .notify
        }
        let identity = straps[device.strap].identity
        payloadLog.append(PayloadRecord(
            sequence: sequence, address: identity.address, object: cp.rawValue,
            uuid: device.characteristics[cp]?.uuid ?? "", bytes: bytes, delivery: delivery, malformed: malformed,
            monotonicMilliseconds: MonotonicClock.seconds() * 1000, wallMilliseconds: WallClock.milliseconds()))
        return true
    }
}
