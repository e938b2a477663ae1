import DBus

/// One weighing, in the units the scale is set to show.
public struct ScaleReading: Sendable, Hashable {
    /// Pounds when `imperial`, else kilograms.
    public var weight: Double
    /// Inches when `imperial`, else centimetres; 0: no height (and no BMI).
    public var height: Double
    /// Percent; 0: no Body Composition Measurement.
    public var bodyFat: Double
    public var imperial: Bool

    public init(weight: Double, height: Double, bodyFat: Double = 0, imperial: Bool) {
        self.weight = weight
        self.height = height
        self.bodyFat = bodyFat
        self.imperial = imperial
    }

    /// The values the characteristics carry, or why they cannot.
    func validate() throws(DBusError) {
        guard weight.isFinite, weight > 0, weightRaw <= 0xFFFE else {
            throw DBusError(.invalidArgs, "weight must be above 0 and below \(imperial ? "655.35 lb" : "327.67 kg")")
        }
        guard height.isFinite, height >= 0, heightRaw <= 0xFFFF else {
            throw DBusError(.invalidArgs, "height must be 0 (none) or up to \(imperial ? "6553.5 in" : "6553.5 cm")")
        }
        guard bodyFat.isFinite, bodyFat >= 0, bodyFat <= 100 else { throw DBusError(.invalidArgs, "body fat must be 0 (none) to 100 %") }
    }

    /// Weight Measurement (0x2A9D) raw weight: 0.01 lb or 0.005 kg.
    var weightRaw: Int { Int((imperial ? weight * 100 : weight / 0.005).rounded()) }
    /// Raw height: 0.1 in or 0.001 m.
    var heightRaw: Int { Int((height * 10).rounded()) }

    /// Flags (bit 0 imperial, bit 3 BMI and height present), weight, then BMI (0.1) and height.
    var weightMeasurement: [UInt8] {
        var flags: UInt8 = imperial ? 0x01 : 0x00
        var out: [UInt8] = []
        func u16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        u16(weightRaw)
        if heightRaw > 0 {
            flags |= 0x08
            let kg = imperial ? weight * 0.45359237 : weight
            let metres = imperial ? height * 0.0254 : height / 100
            u16(min(0xFFFF, Int((kg / (metres * metres) * 10).rounded())))
            u16(heightRaw)
        }
        return [flags] + out
    }

    /// Body Composition Measurement (0x2A9C): flags (bit 0 imperial; no optional field), body fat in 0.1 %.
    /// Weight and height go in the Weight Measurement only, so each reaches the member once.
    var bodyCompositionMeasurement: [UInt8]? {
        guard bodyFat > 0 else { return nil }
        let raw = Int((bodyFat * 10).rounded())
        return [imperial ? 0x01 : 0x00, 0x00, UInt8(raw & 0xFF), UInt8(raw >> 8)]
    }
}

extension SimulatedBlueZ {
    /// Someone steps on the selected scales: each advertises until a central subscribes to
    /// its Weight Measurement, indicates the reading once (Body Composition too when a body
    /// fat is given and subscribed), and 2 s later drops the link and stops advertising. A
    /// reading nobody took is dropped after `scaleAwake` seconds, when the scale sleeps.
    /// Returns how many scales were stepped on.
    @discardableResult
    public func stepOn(_ selector: String, _ reading: ScaleReading) throws(DBusError) -> Int {
        try reading.validate()
        let chosen = strapIndices(selector).filter { straps[$0].identity.model == .scale }
        let awake = configuration.scaleAwake
        for s in chosen {
            straps[s].scaleReading = reading
            straps[s].advertising = true
            straps[s].scaleWakes += 1
            let wake = straps[s].scaleWakes
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(awake))
                await self?.scaleSleeps(s, wake: wake)
            }
        }
        return chosen.count
    }

    /// The scale turns itself off: no advertising, its link (if any) dropped.
    func scaleSleeps(_ s: Int, wake: Int) {
        guard straps[s].scaleWakes == wake else { return }
        straps[s].scaleReading = nil
        straps[s].advertising = false
        guard let d = daemon else { return }
        for a in d.adapters.values {
            for device in a.devices.values where device.strap == s && device.connected {
                dropLink(device, in: d)
            }
        }
    }

    /// While linked: indicates the pending reading as soon as the Weight Measurement has a
    /// subscriber (checked every 50 ms).
    func startScalePump(_ device: SimDevice, generation g: Int) {
        device.pump?.cancel()
        let i = device.adapter, address = straps[device.strap].identity.address, epoch = device.linkEpoch
        device.pump = Task { [weak self] in
            while !Task.isCancelled {
                guard let self, await self.deliverScale(g, i, address, epoch: epoch) else { return }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// False when the link this pump served is gone.
    func deliverScale(_ g: Int, _ i: Int, _ address: String, epoch: Int) -> Bool {
        guard let (d, _, device) = try? self.device(g, i, address), device.connected, device.linkEpoch == epoch else { return false }
        let s = device.strap
        guard device.servicesResolved, let reading = straps[s].scaleReading,
              let weight = device.characteristics.first(where: { $0.value.role == .weightMeasurement })?.key,
              let sessions = device.sessions[weight], !sessions.isEmpty else { return true }
        straps[s].scaleReading = nil
        if send(reading.weightMeasurement, device: device, characteristic: weight, sessions: sessions, in: d,
                sequence: straps[s].measurementSequence, malformed: false) {
            straps[s].measurementSequence += 1
        }
        if let bcs = reading.bodyCompositionMeasurement,
           let c = device.characteristics.first(where: { $0.value.role == .bodyCompositionMeasurement })?.key,
           let subscribers = device.sessions[c], !subscribers.isEmpty,
           send(bcs, device: device, characteristic: c, sessions: subscribers, in: d, sequence: straps[s].measurementSequence, malformed: false) {
            straps[s].measurementSequence += 1
        }
        // The scale shows the result for a moment, then turns itself off.
        straps[s].scaleWakes += 1
        let wake = straps[s].scaleWakes
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(2))
            await self?.scaleSleeps(s, wake: wake)
        }
        return true
    }
}
