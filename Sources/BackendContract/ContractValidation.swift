// SPDX-License-Identifier: MIT

/// The contract's checks of what a gateway sends (docs/backend-openapi.yaml `MetricsRecord`,
/// `Workout`, `ProfileMetric`, `Sample`): the one implementation both backends judge with
/// (the loopback test backend, blegate-server), so a gateway gets the same answer from each.
///
/// Each check answers nil for an acceptable item, else `field: what is wrong`. Records,
/// workouts and profile metrics that fail go back in the batch's `rejected`; a sample that
/// fails makes the whole request a 400 (the contract's samples answer has no `rejected`).
/// A number is an integer when it has no fraction, as JSON Schema counts them (`2700.0` is).
public enum ContractValidation {
    // MARK: MetricsRecord

    public static let recordKeys: Set<String> = ["id", "client_id", "timestamp", "device_id", "source", "metrics", "meta", "rr_ms"]
    static let requiredRecordKeys = ["id", "client_id", "timestamp", "device_id", "source", "metrics", "meta"].sorted()

    public static func recordProblem(_ record: ContractValue) -> String? {
        guard case let .object(members) = record else { return "record: must be a JSON object" }
        guard let id = record["id"]?.string, ContractUUID.isValid(id) else { return uuidProblem("id") }
        if let p = storableProblem(record) { return p }
        if let p = keysProblem(members, allowed: recordKeys, required: requiredRecordKeys,
                               unknown: "unknown field; extensions belong in metrics or meta") { return p }
        if let p = clientProblem(record["client_id"]) { return p }
        guard let t = record["timestamp"]?.string, ContractTimestamp.isValid(t) else {
            return "timestamp: must be \(ContractTimestamp.rule), such as 2026-01-02T03:04:05.678Z"
        }
        guard nonEmptyString(record["device_id"]) else { return "device_id: must be a non-empty string" }
        guard nonEmptyString(record["source"]) else { return "source: must be a non-empty string" }
        guard case let .object(metrics)? = record["metrics"] else { return "metrics: must be an object of numbers" }
        if let k = firstKey(of: metrics, where: { $0.number == nil }) { return "metrics.\(k): must be a number" }
        // The heart rate has a column of its own (float4); BLE's field is 16 bits.
        if let hr = metrics["hr"]?.number, !(0...65_535).contains(hr) { return "metrics.hr: must be from 0 to 65535" }
        guard case let .object(meta)? = record["meta"] else { return "meta: must be an object" }
        if let k = firstKey(of: meta, where: { v in
            switch v {
            case .string, .int, .double, .bool: false
            default: true
            }
        }) {
            return "meta.\(k): must be a string, number or boolean"
        }
        if let rr = record["rr_ms"] {
            guard case let .array(values) = rr, values.allSatisfy({ ($0.number ?? -1) > 0 }) else {
                return "rr_ms: must be an array of positive numbers (milliseconds)"
            }
        }
        return nil
    }

    // MARK: Workout

    public static let workoutKeys: Set<String> = [
        "id", "client_id", "source", "gateway_id", "device_id", "workout_type", "class_name", "start_time", "end_time",
        "duration_seconds", "calories_active", "distance_meters", "avg_heart_rate", "max_heart_rate", "min_heart_rate",
        "seconds_in_zone", "effort_points", "trimp", "hrv_rmssd_ms", "coverage", "formulas", "source_device",
    ]
    static let requiredWorkoutKeys = workoutKeys.subtracting(["distance_meters", "hrv_rmssd_ms"]).sorted()
    public static let workoutTypes: Set<String> = ["run", "walk", "cycle", "strength", "hiit", "other"]

    public static func workoutProblem(_ w: ContractValue) -> String? {
        guard case let .object(members) = w else { return "workout: must be a JSON object" }
        guard let id = w["id"]?.string, ContractUUID.isValid(id) else { return uuidProblem("id") }
        if let p = storableProblem(w) { return p }
        guard w["source"]?.string == "blegate" else { return "source: must be \"blegate\"" }
        if let p = keysProblem(members, allowed: workoutKeys, required: requiredWorkoutKeys, unknown: "unknown field") { return p }
        if let p = clientProblem(w["client_id"]) { return p }
        for key in ["gateway_id", "device_id"] where !nonEmptyString(w[key]) { return "\(key): must be a non-empty string" }
        guard w["source_device"]?.string != nil else { return "source_device: must be a string" }
        guard let type = w["workout_type"]?.string, workoutTypes.contains(type) else {
            return "workout_type: must be one of \(workoutTypes.sorted().joined(separator: ", "))"
        }
        switch w["class_name"] {
        case .null?, .string?: break
        default: return "class_name: must be a string or null"
        }
        for key in ["start_time", "end_time"] {
            guard let t = w[key]?.string, ContractTimestamp.isValid(t) else { return "\(key): must be \(ContractTimestamp.rule)" }
        }
        if let start = w["start_time"]?.string.flatMap(ContractTimestamp.secondsSince1970),
           let end = w["end_time"]?.string.flatMap(ContractTimestamp.secondsSince1970), end < start {
            return "end_time: must not be before start_time"
        }
        guard let duration = integer(w["duration_seconds"]), duration >= 0 else {
            return "duration_seconds: must be a non-negative integer"
        }
        switch w["calories_active"] {
        case .null?: break
        case let v? where (v.number ?? -1) >= 0: break
        default: return "calories_active: must be a non-negative number or null"
        }
        switch w["distance_meters"] {
        case nil, .null?: break
        case let v? where (v.number ?? -1) >= 0: break
        default: return "distance_meters: must be a non-negative number or null"
        }
        if w["hrv_rmssd_ms"] != nil, (w["hrv_rmssd_ms"]?.number ?? -1) < 0 {
            return "hrv_rmssd_ms: must be a non-negative number when present"
        }
        for key in ["avg_heart_rate", "effort_points", "trimp"] {
            guard (w[key]?.number ?? -1) >= 0 else { return "\(key): must be a non-negative number" }
        }
        for key in ["max_heart_rate", "min_heart_rate"] {
            guard (integer(w[key]) ?? -1) >= 0 else { return "\(key): must be a non-negative integer" }
        }
        guard case let .array(zones)? = w["seconds_in_zone"], zones.count == 6,
              zones.allSatisfy({ (integer($0) ?? -1) >= 0 }) else {
            return "seconds_in_zone: must be 6 non-negative integers (below zone 1, zones 1 to 5)"
        }
        guard zones.reduce(0, { $0 + (integer($1) ?? 0) }) == duration else {
            return "seconds_in_zone: must add up to duration_seconds"
        }
        guard let coverage = w["coverage"]?.number, (0...1).contains(coverage) else {
            return "coverage: must be a number from 0 to 1"
        }
        guard let formulas = w["formulas"], case .object = formulas,
              ["zones", "kcal", "points"].allSatisfy({ formulas[$0]?.string != nil }) else {
            return "formulas: must be an object with zones, kcal and points version strings"
        }
        return nil
    }

    // MARK: ProfileMetric

    public static let profileMetricKeys: Set<String> = ["id", "client_id", "metric", "value", "unit", "measured_at", "source", "device_id"]
    static let requiredProfileMetricKeys = profileMetricKeys.sorted()
    /// Each metric's one unit.
    public static let profileMetricUnits: [String: String] = ["height": "cm", "weight": "kg", "body_fat": "percent"]

    public static func profileMetricProblem(_ m: ContractValue) -> String? {
        guard case let .object(members) = m else { return "metric: must be a JSON object" }
        guard let id = m["id"]?.string, ContractUUID.isValid(id) else { return uuidProblem("id") }
        if let p = storableProblem(m) { return p }
        guard m["source"]?.string == "blegate" else { return "source: must be \"blegate\"" }
        if let p = keysProblem(members, allowed: profileMetricKeys, required: requiredProfileMetricKeys, unknown: "unknown field") {
            return p
        }
        guard nonEmptyString(m["client_id"]) else { return "client_id: must be a non-empty string" }
        guard let metric = m["metric"]?.string, let unit = profileMetricUnits[metric] else {
            return "metric: must be height, weight or body_fat"
        }
        guard m["unit"]?.string == unit else { return "unit: must be \(unit) for \(metric)" }
        guard let value = m["value"]?.number, value > 0 else { return "value: must be a positive number" }
        guard let t = m["measured_at"]?.string, ContractTimestamp.isValid(t) else { return "measured_at: must be \(ContractTimestamp.rule)" }
        guard nonEmptyString(m["device_id"]) else { return "device_id: must be a non-empty string" }
        return nil
    }

    // MARK: Sample

    public static let sampleTypes: Set<String> = ["heartRate", "heartRateVariabilityRMSSD", "heartRateVariabilitySDNN"]
    public static let sampleUnits: Set<String> = ["count/min", "ms"]

    public static let sampleKeys: Set<String> = [
        "dataType", "value", "unit", "startDate", "endDate", "uuid", "sourceName", "deviceName", "deviceId", "clientId", "recordId",
    ]

    public static func sampleProblem(_ s: ContractValue) -> String? {
        guard case let .object(members) = s else { return "sample: must be a JSON object" }
        if let extra = members.keys.filter({ !sampleKeys.contains($0) }).min() { return "\(extra): unknown field" }
        guard let uuid = s["uuid"]?.string, ContractUUID.isValid(uuid) else { return uuidProblem("uuid") }
        if let p = storableProblem(s) { return p }
        guard let type = s["dataType"]?.string, sampleTypes.contains(type) else {
            return "dataType: must be one of \(sampleTypes.sorted().joined(separator: ", "))"
        }
        guard s["value"]?.number != nil else { return "value: must be a number" }
        guard let unit = s["unit"]?.string, sampleUnits.contains(unit) else { return "unit: must be count/min or ms" }
        for key in ["startDate", "endDate"] {
            guard let d = s[key]?.string, ContractTimestamp.isValid(d) else { return "\(key): must be \(ContractTimestamp.rule)" }
        }
        guard s["sourceName"]?.string == "blegate" else { return "sourceName: must be \"blegate\"" }
        guard s["deviceName"]?.string != nil else { return "deviceName: must be a string" }
        if let d = s["deviceId"], d.string == nil { return "deviceId: must be a string when present" }
        switch s["clientId"] {
        case nil, .null?, .string?: break
        default: return "clientId: must be a string or null when present"
        }
        if let r = s["recordId"], !(r.string.map(ContractUUID.isValid) ?? false) { return uuidProblem("recordId") }
        return nil
    }

    // MARK: Pairing

    /// A pairing request: a code and the device's address, both non-empty, nothing that
    /// cannot be stored. Both backends answer 400 with this.
    public static func pairProblem(_ body: ContractValue) -> String? {
        guard let code = body["code"]?.string, !code.isEmpty else { return "code: required string" }
        guard let device = body["device"], let address = device["address"]?.string, !address.isEmpty else {
            return "device.address: required string"
        }
        for key in ["name", "model"] {
            switch device[key] {
            case nil, .null?, .string?: break
            default: return "device.\(key): must be a string or null"
            }
        }
        // Only what is stored is judged: other keys a device object may carry are ignored.
        if let p = storableProblem(.string(code), at: "code") { return p }
        for key in ["address", "name", "model"] {
            if let v = device[key], let p = storableProblem(v, at: "device.\(key)") { return p }
        }
        return nil
    }

    // MARK: Shared

    /// What PostgreSQL cannot store, anywhere in an item, keys included: a string holding
    /// NUL (U+0000, which neither text nor jsonb takes) or a number that is not finite.
    /// Without this check such an item fails its whole batch in the database, the server
    /// can only answer "retry later", and the sender retries it for ever.
    public static func storableProblem(_ value: ContractValue, at path: String = "") -> String? {
        isStorable(value) ? nil : storableDetail(value, at: path)
    }

    /// `storableProblem` without its answer: no path is written and no keys sorted for an
    /// item that has no problem (every valid one), which took half of `recordProblem`'s time.
    private static func isStorable(_ value: ContractValue) -> Bool {
        switch value {
        case let .string(text): !text.utf8.contains(0)
        case let .double(d): d.isFinite
        case let .array(items): items.allSatisfy(isStorable)
        case let .object(members): members.allSatisfy { !$0.key.utf8.contains(0) && isStorable($0.value) }
        case .null, .bool, .int: true
        }
    }

    /// The first problem, by path (keys sorted), of a value that has one.
    private static func storableDetail(_ value: ContractValue, at path: String) -> String? {
        func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }
        switch value {
        case let .string(text):
            return text.utf8.contains(0) ? "\(path.isEmpty ? "value" : path): must not contain NUL (\\u0000)" : nil
        case let .double(d):
            return d.isFinite ? nil : "\(path.isEmpty ? "value" : path): must be a finite number"
        case let .array(items):
            for (i, item) in items.enumerated() {
                if let p = storableDetail(item, at: "\(path)[\(i)]") { return p }
            }
            return nil
        case let .object(members):
            for key in members.keys.sorted() {
                if key.utf8.contains(0) { return "\(path.isEmpty ? "key" : path + " key"): must not contain NUL (\\u0000)" }
                if let p = storableDetail(members[key]!, at: name(key)) { return p }
            }
            return nil
        case .null, .bool, .int:
            return nil
        }
    }

    /// A JSON number without a fraction, as an Int (JSON Schema's `integer`).
    public static func integer(_ v: ContractValue?) -> Int? { v?.integer }

    /// The first key by name whose value is wrong, so the answer does not depend on the
    /// order of a dictionary; the sort is paid only when something is wrong.
    private static func firstKey(of object: [String: ContractValue], where wrong: (ContractValue) -> Bool) -> String? {
        guard object.values.contains(where: wrong) else { return nil }
        return object.filter { wrong($0.value) }.keys.min()
    }

    private static func uuidProblem(_ key: String) -> String { "\(key): must be a UUID string (8-4-4-4-12 hex)" }

    private static func nonEmptyString(_ v: ContractValue?) -> Bool {
        guard case let .string(s)? = v else { return false }
        return !s.isEmpty
    }

    /// `client_id` of a record or workout: present, and a non-empty string or null.
    private static func clientProblem(_ v: ContractValue?) -> String? {
        switch v {
        case .null?: return nil
        case let .string(s)? where !s.isEmpty: return nil
        default: return "client_id: must be a non-empty string or null"
        }
    }

    /// The first required key missing, else the first unknown one (by name, so the answer
    /// does not depend on the order the keys came in). `required` is sorted.
    private static func keysProblem(_ members: [String: ContractValue], allowed: Set<String>, required: [String],
                                    unknown: String) -> String? {
        if let missing = required.first(where: { members[$0] == nil }) { return "\(missing): required" }
        guard members.keys.contains(where: { !allowed.contains($0) }) else { return nil }
        if let extra = members.keys.filter({ !allowed.contains($0) }).min() { return "\(extra): \(unknown)" }
        return nil
    }
}

/// The shapes of what a gateway sends, as guesses for decoding it fast (`ContractValue.Guess`).
extension ContractValue.Guess {
    private static func strings(_ keys: [String]) -> [String: Self] { Dictionary(uniqueKeysWithValues: keys.map { ($0, .string) }) }
    private static func numbers(_ keys: [String]) -> [String: Self] { Dictionary(uniqueKeysWithValues: keys.map { ($0, .number) }) }

    public static let record: Self = .object(strings(["id", "client_id", "timestamp", "device_id", "source"]).merging([
        "metrics": .object([:], other: .number), "meta": .object([:], other: .scalar), "rr_ms": .array(.number),
    ]) { a, _ in a }, other: .any)

    public static let workout: Self = .object(strings([
        "id", "client_id", "source", "gateway_id", "device_id", "workout_type", "class_name", "start_time", "end_time", "source_device",
    ]).merging(numbers([
        "duration_seconds", "calories_active", "distance_meters", "avg_heart_rate", "max_heart_rate", "min_heart_rate",
        "effort_points", "trimp", "hrv_rmssd_ms", "coverage",
    ])) { a, _ in a }.merging(["seconds_in_zone": .array(.number), "formulas": .object([:], other: .string)]) { a, _ in a }, other: .any)

    public static let profileMetric: Self = .object(strings(["id", "client_id", "metric", "unit", "measured_at", "source", "device_id"])
        .merging(["value": .number]) { a, _ in a }, other: .any)

    public static let sample: Self = .object(["value": .number], other: .string)

    /// The body of any gateway request: pairing, records, workouts, profile metrics, samples.
    public static let gatewayRequest: Self = .object([
        "gateway_id": .string, "code": .string, "device": .object([:], other: .string),
        "records": .array(record), "workouts": .array(workout), "metrics": .array(profileMetric), "samples": .array(sample),
    ], other: .any)
}
