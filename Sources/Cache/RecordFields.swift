// SPDX-License-Identifier: MIT
import WearMetrics

/// A record's measured fields as the `record` table's typed columns hold them, and the
/// compact binary form of whatever has no column (`extra`) or is sealed (`sealed`).
///
/// The columns are what a heart-rate strap sends (heart rate, RR, contact, energy) and
/// what the HRV engine adds; every other metric or `meta` entry (a treadmill's speed, a
/// scale's units) goes into `extra` as tagged items. Key order is kept: a record reads
/// back equal to what was appended and writes the same JSON text. The order the
/// normalizer produces (column keys in the order below, then other keys) needs no
/// bytes; any other order is written out in `extra` (`Item.ordered`).
///
/// The device's own facts (Device Information, battery, sensor location), which every
/// record of a strap repeats after its own `meta`, are not here: they are a `device_info`
/// row the record points to (`RecordFields.split`).
struct RecordFields: Equatable {
    var hr: Double?
    var energyKJ: Double?
    /// `RRPacking` of `rr_ms`; nil when the record has none.
    var rr: [UInt8]?
    /// `sensor_contact`: 0 unsupported, 2 not detected, 3 detected (the GATT values).
    var contact: Int?
    /// `hr_status`: 1 no reading, 2 no contact.
    var hrStatus: Int?
    var rrCount: Int?
    var rmssd: Double?
    var meanRR: Double?
    var meanHR: Double?
    var sdnn: Double?
    var pnn50: Double?
    var sd1: Double?
    var sd2: Double?
    var hrvWindow: Double?
    var hrvNNCount: Double?
    var hrvArtifact: Double?
    var sdnnWindow: Double?
    var sdnnNNCount: Double?
    var sdnnArtifact: Double?
    /// Tagged items (`Item`); nil when the record has nothing beyond the columns.
    var extra: [UInt8]?
    /// The source's name when it has no `SourceKind` code.
    var sourceText: String?

    init() {}
}

/// The record's `source` as a small integer; 0 for a name outside the table (kept in
/// `extra` then). Part of the file format: names are only ever appended.
enum SourceKind {
    static let names = ["", "ble_hrm", "ble_device", "ble_rsc", "ble_csc", "ble_cps", "ble_ftms", "ble_plx", "ble_hts", "ble_wss", "ble_bcs"]

    static func code(_ source: String) -> Int {
        // ble_hrm and ble_device are nearly every record.
        if source == "ble_hrm" { return 1 }
        return names.firstIndex(of: source) ?? 0
    }

    static func name(_ code: Int) -> String? {
        code > 0 && code < names.count ? names[code] : nil
    }
}

/// The keys `extra` and `device_info` write as one byte (their index + 1); other keys are
/// written as text. Part of the file format: keys are only ever appended.
enum FieldKeys {
    static let known: [String] = [
        // Columns (used by the sealed form and by `Item.ordered`).
        "hr", "energy_expended_kj", "hrv_rmssd", "hrv_mean_rr_ms", "hrv_mean_hr_bpm", "hrv_sdnn", "hrv_pnn50_pct",
        "hrv_sd1_ms", "hrv_sd2_ms", "sensor_contact", "hr_status", "rr_count", "hrv_window_s", "hrv_nn_count",
        "hrv_artifact_pct", "hrv_sdnn_window_s", "hrv_sdnn_nn_count", "hrv_sdnn_artifact_pct",
        // Device facts.
        "battery", "body_sensor_location", "manufacturer_name", "model_number", "serial_number", "firmware_version",
        "hardware_version", "software_version", "system_id", "name",
        // Other meta of the normalizer.
        "hr_source", "raw_flags", "hrv_method", "hrv_context", "hrv_quality", "validation_flags", "device_timestamp",
        "units_reported", "user_id", "machine_type", "ftms_layout", "movement_direction", "wheel_circumference_m",
        "pedal_balance_reference", "torque_source", "temperature_site", "plx_measurement_status", "plx_device_status",
        "multiple_packet",
        // Other metrics of the normalizer.
        "speed_mps", "step_rate_per_min", "stride_length_m", "distance_m", "wheel_revs_total", "cadence_rpm",
        "crank_revs_total", "power_w", "pedal_balance_left_pct", "pedal_balance_pct", "torque_accumulated_nm", "energy_kj",
        "avg_speed_mps", "incline_pct", "ramp_angle_deg", "elevation_gain_m", "elevation_loss_m", "pace_s_per_km",
        "avg_pace_s_per_km", "calories", "energy_rate_kcal_per_h", "energy_rate_kcal_per_min", "machine_hr_bpm", "met",
        "elapsed_s", "remaining_s", "belt_force_n", "avg_power_w", "avg_step_rate_per_min", "stride_count",
        "resistance_level", "stroke_rate_per_min", "stroke_count", "avg_stroke_rate_per_min", "pace_s_per_500m",
        "avg_pace_s_per_500m", "avg_cadence_rpm", "spo2_pct", "pulse_rate_bpm", "spo2_fast_pct", "pulse_rate_fast_bpm",
        "spo2_slow_pct", "pulse_rate_slow_bpm", "perfusion_index_pct", "body_temp_c", "weight_kg", "bmi", "height_cm",
        "body_fat_pct", "basal_metabolism_kj", "muscle_pct", "muscle_mass_kg", "fat_free_mass_kg", "soft_lean_mass_kg",
        "body_water_mass_kg", "impedance_ohm",
    ]

    static func code(_ key: String) -> Int {
        for (i, k) in known.enumerated() where k == key { return i + 1 }
        return 0
    }

    /// Keys that belong to the device rather than to one measurement: a record's trailing
    /// run of these is its device's facts (`device_info`).
    static func isDeviceKey(_ key: String) -> Bool {
        switch key {
        case "battery", "body_sensor_location", "manufacturer_name", "model_number", "serial_number", "firmware_version",
             "hardware_version", "software_version", "system_id":
            true
        default:
            false
        }
    }

    /// The metric columns in their canonical order, by key.
    static let metricColumns = ["hr", "energy_expended_kj", "hrv_rmssd", "hrv_mean_rr_ms", "hrv_mean_hr_bpm", "hrv_sdnn",
                                "hrv_pnn50_pct", "hrv_sd1_ms", "hrv_sd2_ms"]
    /// The meta columns in their canonical order, by key.
    static let metaColumns = ["sensor_contact", "hr_status", "rr_count", "hrv_window_s", "hrv_nn_count", "hrv_artifact_pct",
                              "hrv_sdnn_window_s", "hrv_sdnn_nn_count", "hrv_sdnn_artifact_pct"]
}

/// The items of `extra` and of a sealed body: a tag byte, then its fields (keys as
/// `FieldKeys` codes or text, strings as a LEB128 length and UTF-8, numbers as the 8
/// little-endian bytes of a Float64).
enum Item {
    /// A metric without a column: key, value.
    static let metric: UInt8 = 1
    /// A meta entry without a column: key, text.
    static let meta: UInt8 = 2
    /// Where a metric column's entry stands (only after `ordered`): its key.
    static let metricColumn: UInt8 = 3
    /// Where a meta column's entry stands (only after `ordered`): its key.
    static let metaColumn: UInt8 = 4
    /// The source's name (no `SourceKind` code).
    static let source: UInt8 = 5
    /// The exact text of a numeric meta column whose value alone would not write it so
    /// (`"0.50"` for 0.5): key, text.
    static let text: UInt8 = 6
    /// First item when the keys are not in canonical order: the items then list every
    /// metric, and then every meta entry of the record itself, in order.
    static let ordered: UInt8 = 7
    /// `rr_ms` in a sealed body: its `RRPacking` bytes.
    static let rr: UInt8 = 8
}

/// Bytes in, bytes out: the little pieces of the item format.
struct FieldWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: Int) {
        var v = UInt64(value)
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func key(_ k: String) {
        let code = FieldKeys.code(k)
        varint(code)
        if code == 0 { string(k) }
    }

    mutating func double(_ d: Double) {
        let bits = d.bitPattern
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(i)))) }
    }
}

/// Reads what `FieldWriter` wrote; nil from any read means the bytes are damaged.
struct FieldReader {
    let bytes: [UInt8]
    var at = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { at >= bytes.count }

    mutating func byte() -> UInt8? {
        guard at < bytes.count else { return nil }
        at += 1
        return bytes[at - 1]
    }

    mutating func varint() -> Int? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let b = byte() {
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value <= UInt64(Int32.max) ? Int(value) : nil }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    mutating func string() -> String? {
        guard let n = varint(), n <= bytes.count - at else { return nil }
        defer { at += n }
        return String(validating: bytes[at..<(at + n)], as: UTF8.self)
    }

    mutating func key() -> String? {
        guard let code = varint() else { return nil }
        if code == 0 { return string() }
        return code <= FieldKeys.known.count ? FieldKeys.known[code - 1] : nil
    }

    mutating func double() -> Double? {
        guard bytes.count - at >= 8 else { return nil }
        var bits: UInt64 = 0
        for i in 0..<8 { bits |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
        at += 8
        return Double(bitPattern: bits)
    }
}

/// `rr_ms` as a BLOB. What a strap sends is a count of 1/1024 s per interval (the GATT
/// unit): stored as that count, a little-endian UInt16 each, 2 bytes per interval and
/// exact (`833.0078125` ms is 853). A list holding any other value (a hand-made record,
/// a sub-millisecond one) is stored as a 0x01 byte and a little-endian Float64 each: an
/// odd length tells the two apart (an empty list is the 0x01 byte alone).
enum RRPacking {
    static func pack(_ rr: [Double]) -> [UInt8] {
        // An empty BLOB would bind as NULL (no list): an empty list is the float form of none.
        if rr.isEmpty { return [1] }
        var out: [UInt8] = []
        out.reserveCapacity(2 * rr.count)
        for v in rr {
            let ticks = v * 1024 / 1000
            guard ticks >= 0, ticks <= 65535, ticks == ticks.rounded(), Double(UInt16(ticks)) * 1000 / 1024 == v,
                  v.sign == .plus else {
                var w = FieldWriter()
                w.bytes.reserveCapacity(1 + 8 * rr.count)
                w.bytes.append(1)
                for d in rr { w.double(d) }
                return w.bytes
            }
            let t = UInt16(ticks)
            out.append(UInt8(truncatingIfNeeded: t))
            out.append(UInt8(truncatingIfNeeded: t >> 8))
        }
        return out
    }

    static func unpack(_ bytes: [UInt8]) -> [Double]? {
        if bytes.count % 2 == 0 {
            var out: [Double] = []
            out.reserveCapacity(bytes.count / 2)
            var i = 0
            while i < bytes.count {
                out.append(Double(UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8) * 1000 / 1024)
                i += 2
            }
            return out
        }
        guard bytes[0] == 1, (bytes.count - 1) % 8 == 0 else { return nil }
        var r = FieldReader(bytes)
        r.at = 1
        var out: [Double] = []
        while !r.atEnd {
            guard let d = r.double() else { return nil }
            out.append(d)
        }
        return out
    }
}

/// A stored record's fields could not be read back (damaged bytes).
struct DamagedFields: Error {
    var what: String
}

extension RecordFields {
    /// The record's `meta` split where its device's facts begin: the trailing run of
    /// device keys (`FieldKeys.isDeviceKey`), which the normalizer appends after the
    /// record's own entries.
    static func deviceStart(_ meta: KeyValueList<String>) -> Int {
        let entries = meta.entries
        var start = entries.count
        while start > 0, FieldKeys.isDeviceKey(entries[start - 1].key) { start -= 1 }
        return start
    }

    /// The device facts' bytes for `device_info.entries`: meta items.
    static func encodeDeviceInfo(_ entries: ArraySlice<(key: String, value: String)>) -> [UInt8] {
        var w = FieldWriter()
        for e in entries {
            w.bytes.append(Item.meta)
            w.key(e.key)
            w.string(e.value)
        }
        return w.bytes
    }

    static func decodeDeviceInfo(_ bytes: [UInt8]) throws(DamagedFields) -> [(key: String, value: String)] {
        var r = FieldReader(bytes)
        var out: [(key: String, value: String)] = []
        while !r.atEnd {
            guard r.byte() == Item.meta, let k = r.key(), let v = r.string() else { throw DamagedFields(what: "device information") }
            out.append((k, v))
        }
        return out
    }

    // MARK: Columns

    private func metricColumn(_ i: Int) -> Double? {
        switch i {
        case 0: hr
        case 1: energyKJ
        case 2: rmssd
        case 3: meanRR
        case 4: meanHR
        case 5: sdnn
        case 6: pnn50
        case 7: sd1
        default: sd2
        }
    }

    private mutating func setMetricColumn(_ i: Int, _ v: Double) {
        switch i {
        case 0: hr = v
        case 1: energyKJ = v
        case 2: rmssd = v
        case 3: meanRR = v
        case 4: meanHR = v
        case 5: sdnn = v
        case 6: pnn50 = v
        case 7: sd1 = v
        default: sd2 = v
        }
    }

    private static func metricColumnIndex(_ key: String) -> Int? {
        guard key.utf8.first == UInt8(ascii: "h") || key.utf8.first == UInt8(ascii: "e") else { return nil }
        return FieldKeys.metricColumns.firstIndex(of: key)
    }

    private static func metaColumnIndex(_ key: String) -> Int? {
        guard let first = key.utf8.first, first == UInt8(ascii: "s") || first == UInt8(ascii: "h") || first == UInt8(ascii: "r") else {
            return nil
        }
        return FieldKeys.metaColumns.firstIndex(of: key)
    }

    private static let contactNames = [0: "unsupported", 2: "not_detected", 3: "detected"]
    private static let statusNames = [1: "no_reading", 2: "no_contact"]

    /// The numeric meta column `i` (3...8) as its value.
    private func numericMeta(_ i: Int) -> Double? {
        switch i {
        case 3: hrvWindow
        case 4: hrvNNCount
        case 5: hrvArtifact
        case 6: sdnnWindow
        case 7: sdnnNNCount
        default: sdnnArtifact
        }
    }

    private mutating func setNumericMeta(_ i: Int, _ v: Double) {
        switch i {
        case 3: hrvWindow = v
        case 4: hrvNNCount = v
        case 5: hrvArtifact = v
        case 6: sdnnWindow = v
        case 7: sdnnNNCount = v
        default: sdnnArtifact = v
        }
    }

    /// How the normalizer writes numeric meta column `i`: counts whole, windows whole or
    /// to the millisecond, artifact shares to one decimal. A text written otherwise is
    /// kept as `Item.text`.
    static func format(meta i: Int, _ v: Double) -> String {
        switch i {
        case 2, 4, 7: return whole(v) ?? fixed(v, decimals: 0)
        case 3, 6: return whole(v) ?? fixed(v, decimals: 3)
        default: return fixed(v, decimals: 1)
        }
    }

    private static func whole(_ v: Double) -> String? {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : nil
    }

    private static func fixed(_ v: Double, decimals: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(v) * Double(scale)).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e15 else { return String(v) }
        let n = Int64(scaled)
        var s = (v < 0 && n != 0 ? "-" : "") + String(n / scale)
        if decimals > 0 {
            var frac = String(n % scale)
            while frac.count < decimals { frac = "0" + frac }
            s += "." + frac
        }
        return s
    }

    /// Meta column `i`'s text, or nil when the column is empty.
    private func metaColumnText(_ i: Int, overrides: [(String, String)]) -> String? {
        switch i {
        case 0: return contact.flatMap { Self.contactNames[$0] }
        case 1: return hrStatus.flatMap { Self.statusNames[$0] }
        default:
            let value: Double? = i == 2 ? rrCount.map(Double.init) : numericMeta(i)
            guard let value else { return nil }
            let key = FieldKeys.metaColumns[i]
            for (k, t) in overrides where k == key { return t }
            return Self.format(meta: i, value)
        }
    }

    /// Puts a meta entry into its column if it has one and the column can hold it; returns
    /// false otherwise (the entry then goes into `extra`). `text` collects exact texts.
    private mutating func setMetaColumn(_ i: Int, _ value: String, text: inout FieldWriter) -> Bool {
        switch i {
        case 0:
            switch value {
            case "detected": contact = 3
            case "not_detected": contact = 2
            case "unsupported": contact = 0
            default: return false
            }
        case 1:
            switch value {
            case "no_reading": hrStatus = 1
            case "no_contact": hrStatus = 2
            default: return false
            }
        case 2:
            guard let n = Int(value), n >= 0, String(n) == value else { return false }
            rrCount = n
        default:
            guard let v = Double(value), v.isFinite else { return false }
            setNumericMeta(i, v)
            if Self.format(meta: i, v) != value {
                text.bytes.append(Item.text)
                text.key(FieldKeys.metaColumns[i])
                text.string(value)
            }
        }
        return true
    }

    // MARK: Record ↔ fields

    /// The fields of `record` as columns and `extra`, its device facts left out (they are
    /// `meta.entries[deviceStart...]`).
    init(_ record: WearMetrics, deviceStart: Int) {
        self.init()
        let code = SourceKind.code(record.source)
        var extras = FieldWriter()
        var texts = FieldWriter()
        if code == 0 {
            sourceText = record.source
            extras.bytes.append(Item.source)
            extras.string(record.source)
        }
        // Canonical: columns first, in column order, then the others. `order` lists every
        // entry in case the record turns out not to be canonical.
        var canonical = true
        var order = FieldWriter()
        var lastColumn = -1
        var sawExtra = false
        for (k, v) in record.metrics.entries {
            if let i = Self.metricColumnIndex(k), metricColumn(i) == nil {
                setMetricColumn(i, v)
                if sawExtra || i < lastColumn { canonical = false }
                lastColumn = i
                order.bytes.append(Item.metricColumn)
                order.key(k)
            } else {
                sawExtra = true
                order.bytes.append(Item.metric)
                order.key(k)
                order.double(v)
            }
        }
        lastColumn = -1
        sawExtra = false
        let meta = record.meta.entries
        for n in 0..<deviceStart {
            let (k, v) = meta[n]
            if let i = Self.metaColumnIndex(k), metaColumnText(i, overrides: []) == nil, setMetaColumn(i, v, text: &texts) {
                if sawExtra || i < lastColumn { canonical = false }
                lastColumn = i
                order.bytes.append(Item.metaColumn)
                order.key(k)
            } else {
                sawExtra = true
                order.bytes.append(Item.meta)
                order.key(k)
                order.string(v)
            }
        }
        if let list = record.rrIntervals { rr = RRPacking.pack(list) }
        if canonical {
            // Only the entries without a column.
            var r = FieldReader(order.bytes)
            while let tag = r.byte() {
                switch tag {
                case Item.metricColumn, Item.metaColumn:
                    _ = r.key()
                case Item.metric:
                    let start = r.at - 1
                    _ = r.key()
                    _ = r.double()
                    extras.bytes += order.bytes[start..<r.at]
                default:
                    let start = r.at - 1
                    _ = r.key()
                    _ = r.string()
                    extras.bytes += order.bytes[start..<r.at]
                }
            }
        } else {
            extras.bytes.append(Item.ordered)
            extras.bytes += order.bytes
        }
        extras.bytes += texts.bytes
        if !extras.bytes.isEmpty { extra = extras.bytes }
    }

    /// The record these fields (with its identity and device facts) stand for.
    func record(timestamp: UTCTimestamp, deviceID: String, source code: Int,
                deviceInfo: [(key: String, value: String)]) throws(DamagedFields) -> WearMetrics {
        var metrics = KeyValueList<Double>()
        var meta = KeyValueList<String>()
        var source = SourceKind.name(code)
        var ordered = false
        var extraMetrics: [(String, Double)] = []
        var extraMeta: [(String, String)] = []
        var overrides: [(String, String)] = []
        var orderedItems: [(tag: UInt8, key: String, number: Double, text: String)] = []
        if let extra {
            var r = FieldReader(extra)
            while let tag = r.byte() {
                switch tag {
                case Item.metric:
                    guard let k = r.key(), let v = r.double() else { throw DamagedFields(what: "a metric") }
                    if ordered { orderedItems.append((tag, k, v, "")) } else { extraMetrics.append((k, v)) }
                case Item.meta:
                    guard let k = r.key(), let v = r.string() else { throw DamagedFields(what: "a meta entry") }
                    if ordered { orderedItems.append((tag, k, 0, v)) } else { extraMeta.append((k, v)) }
                case Item.metricColumn, Item.metaColumn:
                    guard ordered, let k = r.key() else { throw DamagedFields(what: "the key order") }
                    orderedItems.append((tag, k, 0, ""))
                case Item.source:
                    guard let s = r.string() else { throw DamagedFields(what: "the source") }
                    source = s
                case Item.text:
                    guard let k = r.key(), let t = r.string() else { throw DamagedFields(what: "a meta text") }
                    overrides.append((k, t))
                case Item.ordered:
                    guard !ordered, extraMetrics.isEmpty, extraMeta.isEmpty else { throw DamagedFields(what: "the key order") }
                    ordered = true
                default:
                    throw DamagedFields(what: "an item of type \(tag)")
                }
            }
        }
        guard let source else { throw DamagedFields(what: "the source") }
        if ordered {
            for item in orderedItems {
                switch item.tag {
                case Item.metric: metrics.appendNew(item.key, item.number)
                case Item.meta: meta.appendNew(item.key, item.text)
                case Item.metricColumn:
                    guard let i = FieldKeys.metricColumns.firstIndex(of: item.key), let v = metricColumn(i) else {
                        throw DamagedFields(what: "the metric \(item.key)")
                    }
                    metrics.appendNew(item.key, v)
                default:
                    guard let i = FieldKeys.metaColumns.firstIndex(of: item.key), let t = metaColumnText(i, overrides: overrides) else {
                        throw DamagedFields(what: "the meta entry \(item.key)")
                    }
                    meta.appendNew(item.key, t)
                }
            }
        } else {
            metrics.reserveCapacity(2 + extraMetrics.count)
            for i in FieldKeys.metricColumns.indices {
                if let v = metricColumn(i) { metrics.appendNew(FieldKeys.metricColumns[i], v) }
            }
            for (k, v) in extraMetrics { metrics.appendNew(k, v) }
            meta.reserveCapacity(3 + extraMeta.count + deviceInfo.count)
            for i in FieldKeys.metaColumns.indices {
                if let t = metaColumnText(i, overrides: overrides) { meta.appendNew(FieldKeys.metaColumns[i], t) }
            }
            for (k, v) in extraMeta { meta.appendNew(k, v) }
        }
        for (k, v) in deviceInfo { meta.appendNew(k, v) }
        var rrIntervals: [Double]?
        if let rr {
            guard let list = RRPacking.unpack(rr) else { throw DamagedFields(what: "rr_ms") }
            rrIntervals = list
        }
        return WearMetrics(timestamp: timestamp, deviceID: deviceID, source: source, metrics: metrics, meta: meta, rrIntervals: rrIntervals)
    }

    // MARK: Sealed form

    /// Everything of the record but its identity (sequence, id, time, device, source code)
    /// and device facts, as items in the record's own order: what an encrypted cache seals.
    static func body(_ record: WearMetrics, deviceStart: Int) -> [UInt8] {
        var w = FieldWriter()
        w.bytes.reserveCapacity(64)
        if SourceKind.code(record.source) == 0 {
            w.bytes.append(Item.source)
            w.string(record.source)
        }
        if let rr = record.rrIntervals {
            let packed = RRPacking.pack(rr)
            w.bytes.append(Item.rr)
            w.varint(packed.count)
            w.bytes += packed
        }
        for (k, v) in record.metrics.entries {
            w.bytes.append(Item.metric)
            w.key(k)
            w.double(v)
        }
        let meta = record.meta.entries
        for n in 0..<deviceStart {
            w.bytes.append(Item.meta)
            w.key(meta[n].key)
            w.string(meta[n].value)
        }
        return w.bytes
    }

    /// The record a sealed body (opened) stands for.
    static func record(body: [UInt8], timestamp: UTCTimestamp, deviceID: String, source code: Int,
                       deviceInfo: [(key: String, value: String)]) throws(DamagedFields) -> WearMetrics {
        var source = SourceKind.name(code)
        var metrics = KeyValueList<Double>()
        var meta = KeyValueList<String>()
        var rr: [Double]?
        var r = FieldReader(body)
        while let tag = r.byte() {
            switch tag {
            case Item.source:
                guard let s = r.string() else { throw DamagedFields(what: "the source") }
                source = s
            case Item.rr:
                guard let n = r.varint(), n <= body.count - r.at, let list = RRPacking.unpack(Array(body[r.at..<(r.at + n)])) else {
                    throw DamagedFields(what: "rr_ms")
                }
                r.at += n
                rr = list
            case Item.metric:
                guard let k = r.key(), let v = r.double() else { throw DamagedFields(what: "a metric") }
                metrics.appendNew(k, v)
            case Item.meta:
                guard let k = r.key(), let v = r.string() else { throw DamagedFields(what: "a meta entry") }
                meta.appendNew(k, v)
            default:
                throw DamagedFields(what: "an item of type \(tag)")
            }
        }
        guard let source else { throw DamagedFields(what: "the source") }
        for (k, v) in deviceInfo { meta.appendNew(k, v) }
        return WearMetrics(timestamp: timestamp, deviceID: deviceID, source: source, metrics: metrics, meta: meta, rrIntervals: rr)
    }
}
