// SPDX-License-Identifier: MIT
import Hummingbird
import NIOCore
import Outbox
import BackendContract

/// `GET /api/v1/members/{client_id}/workouts|heart-rate|workouts.csv`: a member's history
/// for the staff and a coach, paged with an opaque cursor (`next_cursor`, then `?cursor=`).
struct ReadEndpoints {
    let store: ServerStore

    static let csvColumns = [
        "id", "class_name", "workout_type", "start_time", "end_time", "duration_seconds", "calories_active",
        "distance_meters", "avg_heart_rate", "max_heart_rate", "min_heart_rate", "zone0_s", "zone1_s", "zone2_s",
        "zone3_s", "zone4_s", "zone5_s", "effort_points", "trimp", "hrv_rmssd_ms", "coverage", "gateways", "sources",
    ]

    func member(_ request: Request, path: String) async throws -> Response {
        let rest = path.dropFirst("/api/v1/members/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2, let clientID = String(rest[0]).removingPercentEncoding, !clientID.isEmpty else {
            return ServerResponder.json(404, ServerResponder.error("no such endpoint: \(path)"))
        }
        let q = request.uri.queryParameters
        var limit = 100
        if let l = q["limit"] {
            guard let n = Int(l), (1...1000).contains(n) else { return ServerResponder.json(400, ServerResponder.error("limit: 1 to 1000")) }
            limit = n
        }
        var cursor: Cursor?
        if let c = q["cursor"] {
            guard let parsed = Cursor(String(c)) else { return ServerResponder.json(400, ServerResponder.error("cursor: not one this server gave")) }
            cursor = parsed
        }
        switch rest[1] {
        case "workouts":
            let page = try await store.workouts(clientID: clientID, limit: limit, after: cursor)
            return ServerResponder.json(200, MemberPage(clientID: clientID, key: .workouts, items: page.items, next: page.next))
        case "heart-rate":
            var bounds: [String?] = []
            for key: Substring in ["from", "to"] {
                guard let v = q[key].map(String.init) else { bounds.append(nil); continue }
                guard ContractTimestamp.isValid(v) else { return ServerResponder.json(400, ServerResponder.error("\(key): must be \(ContractTimestamp.rule)")) }
                bounds.append(v)
            }
            let page = try await store.heartRate(clientID: clientID, from: bounds[0], to: bounds[1], limit: limit, after: cursor)
            return ServerResponder.json(200, MemberPage(clientID: clientID, key: .heartRate, items: page.items.map(HeartRateAnswer.init),
                                                        next: page.next))
        case "workouts.csv":
            var lines = [Self.csvColumns.joined(separator: ",")]
            var after = cursor
            repeat {
                let page = try await store.workouts(clientID: clientID, limit: 1000, after: after)
                lines += page.items.map(Self.csvRow)
                after = page.next
            } while after != nil
            var headers = HTTPFields()
            headers[.contentType] = "text/csv; charset=utf-8"
            headers[.contentDisposition] = "attachment; filename=\"workouts-\(Self.fileSafe(clientID)).csv\""
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: lines.joined(separator: "\r\n") + "\r\n")))
        default:
            return ServerResponder.json(404, ServerResponder.error("no such endpoint: \(path)"))
        }
    }

    static func csvRow(_ w: MergedWorkout) -> String {
        func number(_ d: Double?) -> String {
            guard let d else { return "" }
            return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        }
        var zones = Array(repeating: "", count: 6)
        for (i, v) in w.secondsInZone.prefix(6).enumerated() { zones[i] = String(v) }
        let fields = [
            w.id, w.className ?? "", w.workoutType ?? "", w.startTime, w.endTime,
            String(w.durationSeconds), number(w.caloriesActive), number(w.distanceMeters), number(w.avgHeartRate),
            String(w.maxHeartRate), String(w.minHeartRate),
        ] + zones + [
            number(w.effortPoints), number(w.trimp), number(w.hrvRMSSDms), number(w.coverage),
            w.gatewayIDs.joined(separator: " "), w.sources.joined(separator: " "),
        ]
        return fields.map(csvField).joined(separator: ",")
    }

    /// RFC 4180 quoting; a leading `=`, `+`, `-` or `@` is prefixed with `'` so a
    /// spreadsheet never runs a class name as a formula.
    static func csvField(_ s: String) -> String {
        var s = s
        if let f = s.first, "=+-@".contains(f), Double(s) == nil { s = "'" + s }
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacing("\"", with: "\"\"") + "\""
    }

    static func fileSafe(_ s: String) -> String {
        String(s.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
    }
}

/// A page of a member's history: `{client_id, workouts | heart_rate, next_cursor}`, the
/// cursor null on the last page.
struct MemberPage<Item: Encodable>: Encodable {
    enum Key: String, CodingKey {
        case clientID = "client_id"
        case workouts
        case heartRate = "heart_rate"
        case nextCursor = "next_cursor"
    }

    var clientID: String
    var key: Key
    var items: [Item]
    var next: Cursor?

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(items, forKey: key)
        try c.encode(next?.text, forKey: .nextCursor)
    }
}

/// One point of `GET /api/v1/members/{client_id}/heart-rate`.
struct HeartRateAnswer: Encodable {
    var timestamp: String
    var hr: Double
    var deviceID: String
    var gatewayID: String

    enum CodingKeys: String, CodingKey {
        case timestamp, hr
        case deviceID = "device_id"
        case gatewayID = "gateway_id"
    }

    init(_ p: ServerStore.HeartRatePoint) {
        timestamp = p.time
        hr = p.hr
        deviceID = p.deviceID
        gatewayID = p.gatewayID
    }
}

extension String {
    var removingPercentEncoding: String? {
        var out: [UInt8] = []
        var bytes = Array(utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "%") {
                guard bytes.count >= 2, let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// `application/x-www-form-urlencoded` value: `+` is a space.
    var formDecoded: String? {
        String(map { $0 == "+" ? " " : $0 }).removingPercentEncoding
    }
}
