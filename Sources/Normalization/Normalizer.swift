// SPDX-License-Identifier: MIT
import GATT
import HRV
import WearMetrics

public struct NormalizerConfiguration: Sendable, Equatable {
    /// Wheel circumference for CSC/CPS speed, metres (Nordic's default 2.340).
    public var wheelCircumferenceMeters: Double
    /// When true, an FTMS machine's heart rate goes to `machine_hr_bpm` instead of `hr`
    /// (set it when a strap is connected for the same person: prefer the strap).
    public var preferStrapHeartRate: Bool
    /// Emit HRV windows that fail the minimum-data rules (default false: such numbers
    /// are not HRV you can trust).
    public var emitUnreliableHRV: Bool
    /// FTMS "More Data" fragments older than this are discarded, seconds.
    public var ftmsFragmentTimeout: Double

    public init(wheelCircumferenceMeters: Double = 2.340, preferStrapHeartRate: Bool = false,
                emitUnreliableHRV: Bool = false, ftmsFragmentTimeout: Double = 2) {
        self.wheelCircumferenceMeters = wheelCircumferenceMeters
        self.preferStrapHeartRate = preferStrapHeartRate
        self.emitUnreliableHRV = emitUnreliableHRV
        self.ftmsFragmentTimeout = ftmsFragmentTimeout
    }
}

/// Decoded characteristics → WearMetrics records with the key mapping of reference §7.2.
///
/// Stateless for 0x2A37 (`record(heartRate:…)` is the hot path); stateful for CSC/CPS
/// (counter deltas) and FTMS (fragment merge), hence `normalize` is `mutating`.
public struct WearMetricsNormalizer: Sendable {
    public var configuration: NormalizerConfiguration
    private var wheel: [String: RevolutionRateTracker] = [:]
    private var crank: [String: RevolutionRateTracker] = [:]
    private var ftmsPending: [String: (values: [FTMSValue], at: UTCTimestamp)] = [:]

    public init(configuration: NormalizerConfiguration = NormalizerConfiguration()) {
        self.configuration = configuration
    }

    // MARK: Heart rate (hot path)

    /// The record of one Heart Rate Measurement. `hr` is omitted when the value is 0
    /// ("no reading") or the sensor reports no skin contact; `rr_ms` is the raw RR list.
    public static func record(heartRate m: HeartRateMeasurement, deviceID: String, at time: UTCTimestamp,
                              deviceMeta: DeviceMeta? = nil) -> WearMetrics {
        var metrics = KeyValueList<Double>()
        var meta = KeyValueList<String>()
        meta.reserveCapacity(4 + (deviceMeta?.entries.count ?? 0))
        let contact = m.sensorContact
        if m.heartRate != 0, contact != .notDetected { metrics["hr"] = Double(m.heartRate) }
        if let ee = m.energyExpendedKJ { metrics["energy_expended_kj"] = Double(ee) }
        meta["sensor_contact"] = contact.label
        if m.heartRate == 0 { meta["hr_status"] = "no_reading" } else if contact == .notDetected { meta["hr_status"] = "no_contact" }
        var rr: [Double]?
        if !m.rrIntervalTicks.isEmpty {
            var list = [Double]()
            list.reserveCapacity(m.rrIntervalTicks.count)
            for t in m.rrIntervalTicks { list.append(HeartRateMeasurement.milliseconds(ticks: t)) }
            rr = list
            meta["rr_count"] = String(list.count)
        }
        if m.rfuFlagBits != 0 { meta["raw_flags"] = "0x" + hexString([m.flags]) }
        if let d = deviceMeta {
            // The device's keys are unique among themselves: each is checked only
            // against this notification's own few keys, not the growing list.
            let own = meta.count
            for e in d.entries.entries where !meta.entries[0..<own].contains(where: { $0.key == e.key }) {
                meta.appendNew(e.key, e.value)
            }
        }
        return WearMetrics(timestamp: time, deviceID: deviceID, source: "ble_hrm", metrics: metrics, meta: meta, rrIntervals: rr)
    }

    /// A heart rate heard in an advertisement (no link): `hr` with
    /// `meta.hr_source = "advertisement"` and no `rr_ms`, so nothing downstream takes it
    /// for a notification or computes HRV from it.
    public static func record(advertisedHeartRate bpm: Double, deviceID: String, at time: UTCTimestamp,
                              deviceMeta: DeviceMeta? = nil) -> WearMetrics {
        var metrics = KeyValueList<Double>()
        metrics["hr"] = bpm
        var meta = KeyValueList<String>()
        meta["hr_source"] = "advertisement"
        meta["sensor_contact"] = "detected"
        if let d = deviceMeta {
            for e in d.entries.entries where e.key != "hr_source" && e.key != "sensor_contact" { meta.appendNew(e.key, e.value) }
        }
        return WearMetrics(timestamp: time, deviceID: deviceID, source: "ble_hrm", metrics: metrics, meta: meta)
    }

    // MARK: Any characteristic

    /// The record for any decoded characteristic, or nil when it carries no metric on its
    /// own (Battery/BSL/DIS go through `DeviceMeta`; an FTMS "More Data" fragment waits
    /// for the rest; Intermediate Temperature is not final; unsuccessful measurements).
    public mutating func normalize(_ decoded: DecodedCharacteristic, deviceID: String, at time: UTCTimestamp,
                                   deviceMeta: DeviceMeta? = nil) -> WearMetrics? {
        var r: WearMetrics?
        switch decoded {
        case let .heartRateMeasurement(m):
            return WearMetricsNormalizer.record(heartRate: m, deviceID: deviceID, at: time, deviceMeta: deviceMeta)
        case .batteryLevel, .bodySensorLocation, .deviceInformation:
            var meta = DeviceMeta()
            meta.absorb(decoded)
            r = WearMetrics(timestamp: time, deviceID: deviceID, source: "ble_device", meta: meta.entries)
        case let .rscMeasurement(m):
            r = rsc(m, deviceID, time)
        case let .cscMeasurement(m):
            r = csc(m, deviceID, time)
        case let .cyclingPowerMeasurement(m):
            r = cps(m, deviceID, time)
        case let .fitnessMachine(m):
            r = ftms(m, deviceID, time)
        case let .plxContinuousMeasurement(m):
            r = plx(m, deviceID, time)
        case let .temperatureMeasurement(m):
            r = temperature(m, deviceID, time)
        case let .weightMeasurement(m):
            r = weight(m, deviceID, time)
        case let .bodyCompositionMeasurement(m):
            r = bodyComposition(m, deviceID, time)
        }
        guard var record = r else { return nil }
        if let d = deviceMeta {
            for e in d.entries.entries where record.meta[e.key] == nil { record.meta[e.key] = e.value }
        }
        return record
    }

    /// Forget counter and fragment state for a device (disconnect).
    public mutating func reset(deviceID: String) {
        wheel[deviceID] = nil
        crank[deviceID] = nil
        ftmsPending[deviceID] = nil
    }

    private func rsc(_ m: RSCMeasurement, _ id: String, _ t: UTCTimestamp) -> WearMetrics {
        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_rsc")
        r.setMetric("speed_mps", m.speedMetersPerSecond)
        r.setMetric("step_rate_per_min", Double(m.cadence))
        r.setMetric("stride_length_m", m.strideLengthMeters)
        r.setMetric("distance_m", m.totalDistanceMeters)
        return r
    }

    private mutating func csc(_ m: CSCMeasurement, _ id: String, _ t: UTCTimestamp) -> WearMetrics? {
        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_csc")
        if let revs = m.cumulativeWheelRevolutions, let time = m.lastWheelEventTime {
            var tracker = wheel[id] ?? .cscWheel(circumferenceMeters: configuration.wheelCircumferenceMeters)
            if let s = tracker.update(revolutions: revs, eventTime: time, receivedAt: t.secondsSince1970) {
                r.setMetric("speed_mps", s.rate)
            }
            wheel[id] = tracker
            r.setMetric("wheel_revs_total", Double(revs))
            r.meta["wheel_circumference_m"] = formatFixed(configuration.wheelCircumferenceMeters, decimals: 3)
        }
        if let revs = m.cumulativeCrankRevolutions, let time = m.lastCrankEventTime {
            var tracker = crank[id] ?? .crank()
            if let s = tracker.update(revolutions: UInt32(revs), eventTime: time, receivedAt: t.secondsSince1970) {
                r.setMetric("cadence_rpm", s.rate)
            }
            crank[id] = tracker
            r.setMetric("crank_revs_total", Double(revs))
        }
        return r.metrics.isEmpty ? nil : r
    }

    private mutating func cps(_ m: CyclingPowerMeasurement, _ id: String, _ t: UTCTimestamp) -> WearMetrics {
        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_cps")
        r.setMetric("power_w", Double(m.instantaneousPowerWatts))
        if let b = m.pedalPowerBalancePercent {
            r.setMetric(m.pedalBalanceReferenceIsLeft ? "pedal_balance_left_pct" : "pedal_balance_pct", b)
            r.meta["pedal_balance_reference"] = m.pedalBalanceReferenceIsLeft ? "left" : "unknown"
        }
        if let torque = m.accumulatedTorqueNewtonMeters {
            r.setMetric("torque_accumulated_nm", torque)
            r.meta["torque_source"] = m.torqueSourceIsCrank ? "crank" : "wheel"
        }
        if let revs = m.cumulativeWheelRevolutions, let time = m.lastWheelEventTime {
            var tracker = wheel[id] ?? .cpsWheel(circumferenceMeters: configuration.wheelCircumferenceMeters)
            if let s = tracker.update(revolutions: revs, eventTime: time, receivedAt: t.secondsSince1970) {
                r.setMetric("speed_mps", s.rate)
            }
            wheel[id] = tracker
        }
        if let revs = m.cumulativeCrankRevolutions, let time = m.lastCrankEventTime {
            var tracker = crank[id] ?? .crank()
            if let s = tracker.update(revolutions: UInt32(revs), eventTime: time, receivedAt: t.secondsSince1970) {
                r.setMetric("cadence_rpm", s.rate)
            }
            crank[id] = tracker
        }
        r.setMetric("energy_kj", m.accumulatedEnergyKJ.map(Double.init))
        return r
    }

    private mutating func ftms(_ m: FitnessMachineData, _ id: String, _ t: UTCTimestamp) -> WearMetrics? {
        // Merge "More Data" fragments (later value wins); emit on the fragment with bit 0 = 0.
        var values = m.values
        if let pending = ftmsPending[id], Double(t.millisecondsSince1970 - pending.at.millisecondsSince1970) / 1000 <= configuration.ftmsFragmentTimeout {
            let fresh = Set(values.map(\.field))
            values = pending.values.filter { !fresh.contains($0.field) } + values
        }
        if m.moreData {
            ftmsPending[id] = (values, t)
            return nil
        }
        ftmsPending[id] = nil

        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_ftms")
        r.meta["machine_type"] = m.machine.rawValue
        r.meta["ftms_layout"] = m.layout.rawValue
        for v in values {
            let x = v.value
            switch v.field {
            case .instantaneousSpeed: r.setMetric("speed_mps", x / 3.6)
            case .averageSpeed: r.setMetric("avg_speed_mps", x / 3.6)
            case .totalDistance: r.setMetric("distance_m", x)
            case .inclination: r.setMetric("incline_pct", x)
            case .rampAngle: r.setMetric("ramp_angle_deg", x)
            case .positiveElevationGain: r.setMetric("elevation_gain_m", x)
            case .negativeElevationGain: r.setMetric("elevation_loss_m", x)
            case .instantaneousPace, .averagePace:
                let key = v.field == .instantaneousPace ? "pace_s_per_km" : "avg_pace_s_per_km"
                if v.raw != 0 {
                    // v1.0: km/min → s/km; GSS: seconds per 500 m → s/km (unit unverified upstream).
                    r.setMetric(key, m.layout == .v1 ? 60 / x : x * 2)
                }
            case .totalEnergy: r.setMetric("calories", x)
            case .energyPerHour: r.setMetric("energy_rate_kcal_per_h", x)
            case .energyPerMinute: r.setMetric("energy_rate_kcal_per_min", x)
            case .heartRate:
                if v.raw != 0 {
                    if configuration.preferStrapHeartRate {
                        r.setMetric("machine_hr_bpm", x)
                    } else {
                        r.setMetric("hr", x)
                        r.meta["hr_source"] = "machine"
                    }
                }
            case .metabolicEquivalent: r.setMetric("met", x)
            case .elapsedTime: r.setMetric("elapsed_s", x)
            case .remainingTime: r.setMetric("remaining_s", x)
            case .forceOnBelt: r.setMetric("belt_force_n", x)
            case .powerOutput, .instantaneousPower: r.setMetric("power_w", x)
            case .averagePower: r.setMetric("avg_power_w", x)
            case .stepRate: r.setMetric("step_rate_per_min", x)
            case .averageStepRate: r.setMetric("avg_step_rate_per_min", x)
            case .strideCount: r.setMetric("stride_count", x)
            case .resistanceLevel: r.setMetric("resistance_level", x)
            case .strokeRate: r.setMetric("stroke_rate_per_min", x)
            case .strokeCount: r.setMetric("stroke_count", x)
            case .averageStrokeRate: r.setMetric("avg_stroke_rate_per_min", x)
            case .rowerInstantaneousPace: if v.raw != 0 { r.setMetric("pace_s_per_500m", x) }
            case .rowerAveragePace: if v.raw != 0 { r.setMetric("avg_pace_s_per_500m", x) }
            case .instantaneousCadence: r.setMetric("cadence_rpm", x)
            case .averageCadence: r.setMetric("avg_cadence_rpm", x)
            }
        }
        if let backward = m.movementBackward { r.meta["movement_direction"] = backward ? "backward" : "forward" }
        return r
    }

    private func plx(_ m: PLXContinuousMeasurement, _ id: String, _ t: UTCTimestamp) -> WearMetrics? {
        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_plx")
        if let s = m.measurementStatus { r.meta["plx_measurement_status"] = "0x" + hexString([UInt8(s >> 8), UInt8(s & 0xFF)]) }
        if let d = m.deviceAndSensorStatus {
            r.meta["plx_device_status"] = "0x" + hexString([UInt8(d >> 16 & 0xFF), UInt8(d >> 8 & 0xFF), UInt8(d & 0xFF)])
        }
        guard !m.isStatusUnusable else { return nil }
        r.setMetric("spo2_pct", m.normal.spo2.finite)
        r.setMetric("pulse_rate_bpm", m.normal.pulseRate.finite)
        r.setMetric("spo2_fast_pct", m.fast?.spo2.finite)
        r.setMetric("pulse_rate_fast_bpm", m.fast?.pulseRate.finite)
        r.setMetric("spo2_slow_pct", m.slow?.spo2.finite)
        r.setMetric("pulse_rate_slow_bpm", m.slow?.pulseRate.finite)
        r.setMetric("perfusion_index_pct", m.pulseAmplitudeIndex?.finite)
        return r.metrics.isEmpty ? nil : r
    }

    private func temperature(_ m: TemperatureMeasurement, _ id: String, _ t: UTCTimestamp) -> WearMetrics? {
        guard m.characteristic == .temperatureMeasurement, let c = m.celsius else { return nil }
        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_hts")
        r.setMetric("body_temp_c", c)
        if let site = m.temperatureTypeLabel { r.meta["temperature_site"] = site }
        if let ts = m.timestamp { r.meta["device_timestamp"] = ts.isoLocal }
        return r
    }

    private func weight(_ m: WeightMeasurement, _ id: String, _ t: UTCTimestamp) -> WearMetrics? {
        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_wss")
        r.setMetric("weight_kg", m.weightKilograms)
        r.setMetric("bmi", m.bmi)
        r.setMetric("height_cm", m.heightCentimeters)
        guard !r.metrics.isEmpty else { return nil }
        r.meta["units_reported"] = m.isImperial ? "imperial" : "si"
        if let u = m.userID { r.meta["user_id"] = String(u) }
        if let ts = m.timestamp { r.meta["device_timestamp"] = ts.isoLocal }
        return r
    }

    private func bodyComposition(_ m: BodyCompositionMeasurement, _ id: String, _ t: UTCTimestamp) -> WearMetrics? {
        guard !m.isMeasurementUnsuccessful else { return nil }
        var r = WearMetrics(timestamp: t, deviceID: id, source: "ble_bcs")
        r.setMetric("body_fat_pct", m.bodyFatPercent)
        r.setMetric("basal_metabolism_kj", m.basalMetabolismKJ.map(Double.init))
        r.setMetric("muscle_pct", m.musclePercent)
        r.setMetric("muscle_mass_kg", m.muscleMassKilograms)
        r.setMetric("fat_free_mass_kg", m.fatFreeMassKilograms)
        r.setMetric("soft_lean_mass_kg", m.softLeanMassKilograms)
        r.setMetric("body_water_mass_kg", m.bodyWaterMassKilograms)
        r.setMetric("impedance_ohm", m.impedanceOhms)
        r.setMetric("weight_kg", m.weightKilograms)
        r.setMetric("height_cm", m.heightCentimeters)
        r.meta["units_reported"] = m.isImperial ? "imperial" : "si"
        if let u = m.userID { r.meta["user_id"] = String(u) }
        if let ts = m.timestamp { r.meta["device_timestamp"] = ts.isoLocal }
        if m.isMultiplePacket { r.meta["multiple_packet"] = "true" }
        return r
    }

    // MARK: HRV

    /// The record of one HRV emission: RMSSD, mean NN and mean HR from the RMSSD window;
    /// SDNN (as `hrv_sdnn` only from windows of at least 5 min, else
    /// `hrv_sdnn_<N>s_ms`), pNN50, SD1 and SD2 from the SDNN window. Windows that fail
    /// the minimum-data rules are left out unless `emitUnreliableHRV`; nil if nothing
    /// is left.
    public func record(hrv report: HRVReport, deviceID: String? = nil) -> WearMetrics? {
        var r = WearMetrics(timestamp: UTCTimestamp(secondsSince1970: report.time),
                            deviceID: deviceID ?? report.deviceID, source: "ble_hrm")
        let allow = configuration.emitUnreliableHRV
        if let td = report.short.timeDomain, report.short.meetsMinimumData || allow {
            r.setMetric("hrv_rmssd", td.rmssd)
            r.setMetric("hrv_mean_rr_ms", td.meanNN)
            r.setMetric("hrv_mean_hr_bpm", td.meanHR)
        }
        if let td = report.long.timeDomain, report.long.meetsMinimumData || allow {
            let w = report.long.windowSeconds
            r.setMetric(w >= 300 ? "hrv_sdnn" : "hrv_sdnn_\(Int(w))s_ms", td.sdnn)
            r.setMetric("hrv_pnn50_pct", td.pnn50)
            r.setMetric("hrv_sd1_ms", td.sd1)
            r.setMetric("hrv_sd2_ms", td.sd2)
        }
        guard !r.metrics.isEmpty else { return nil }
        r.meta["hrv_window_s"] = formatSeconds(report.short.windowSeconds)
        r.meta["hrv_nn_count"] = String(report.short.nnCount)
        r.meta["hrv_artifact_pct"] = formatFixed(report.short.artifactPercent, decimals: 1)
        r.meta["hrv_sdnn_window_s"] = formatSeconds(report.long.windowSeconds)
        r.meta["hrv_sdnn_nn_count"] = String(report.long.nnCount)
        r.meta["hrv_sdnn_artifact_pct"] = formatFixed(report.long.artifactPercent, decimals: 1)
        r.meta["hrv_method"] = report.method
        r.meta["hrv_context"] = report.context.rawValue
        if allow, !(report.short.meetsMinimumData && report.long.meetsMinimumData) { r.meta["hrv_quality"] = "insufficient" }
        return r
    }
}

func formatSeconds(_ s: Double) -> String {
    s == s.rounded() && abs(s) < 1e15 ? String(Int64(s)) : formatFixed(s, decimals: 3)
}
