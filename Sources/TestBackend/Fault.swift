// SPDX-License-Identifier: MIT
import BackendContract
import Timing

/// A misbehaviour the test backend shows on the contract's endpoints (never on `/_admin`).
///
/// A fault applies to the next `count` requests, or for `duration` from when it is added,
/// or (neither set) until cleared.
public struct Fault: Sendable, Equatable {
    public enum Mode: Sendable, Equatable {
        /// Answer with this status (and `Retry-After` when given: seconds or an HTTP-date).
        case status(Int, retryAfter: String?)
        /// Wait this long before handling the request.
        case delay(Duration)
        /// Answer 413 to batches with more records (or samples) than this.
        case maxBatch(Int)
        /// Store the batch as usual but answer counts that do not add up to it: one fewer
        /// inserted (or duplicate) than the items sent, as a backend that lost track would.
        case miscount
    }

    public var mode: Mode
    public var count: Int?
    public var duration: Duration?

    public init(_ mode: Mode, count: Int? = nil, duration: Duration? = nil) {
        self.mode = mode
        self.count = count
        self.duration = duration
    }

    public static func status(_ code: Int, retryAfter: String? = nil, count: Int? = nil, duration: Duration? = nil) -> Fault {
        Fault(.status(code, retryAfter: retryAfter), count: count, duration: duration)
    }

    public static func delay(_ delay: Duration, count: Int? = nil, duration: Duration? = nil) -> Fault {
        Fault(.delay(delay), count: count, duration: duration)
    }

    public static func maxBatch(_ records: Int, count: Int? = nil, duration: Duration? = nil) -> Fault {
        Fault(.maxBatch(records), count: count, duration: duration)
    }

    public static func miscount(count: Int? = nil, duration: Duration? = nil) -> Fault {
        Fault(.miscount, count: count, duration: duration)
    }
}

/// Parsing of `POST /_admin/faults` bodies.
extension Fault {
    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// What an admin fault request asks for: a fault, or an outage of the listener.
    enum Request {
        case fault(Fault)
        case outage(Duration)
    }

    /// `{"mode":"status","status":500,"count":3}`, `{"mode":"status","status":429,"retry_after":"2"}`,
    /// `{"mode":"delay","delay_ms":1500,"seconds":10}`, `{"mode":"max_batch","records":100}`,
    /// `{"mode":"miscount","count":1}`, `{"mode":"outage","seconds":30}`.
    static func request(_ json: ContractValue) throws -> Request {
        guard let mode = json["mode"]?.string else {
            throw ParseError(description: "mode: required, one of status, delay, max_batch, miscount, outage")
        }
        let count = json["count"]?.number.map { Int($0) }
        let duration = json["seconds"]?.number.map { Duration.milliseconds(Int64($0 * 1000)) }
        switch mode {
        case "status":
            guard let code = json["status"]?.number, (100...599).contains(code) else {
                throw ParseError(description: "status: required, an HTTP status from 100 to 599")
            }
            let retry = json["retry_after"].flatMap { v -> String? in
                if let s = v.string { return s }
                return v.number.map { String(Int($0)) }
            }
            return .fault(.status(Int(code), retryAfter: retry, count: count, duration: duration))
        case "delay":
            guard let ms = json["delay_ms"]?.number, ms >= 0 else {
                throw ParseError(description: "delay_ms: required, milliseconds to wait before answering")
            }
            return .fault(.delay(.milliseconds(Int64(ms)), count: count, duration: duration))
        case "max_batch":
            guard let n = json["records"]?.number, n >= 0 else {
                throw ParseError(description: "records: required, the largest batch accepted")
            }
            return .fault(.maxBatch(Int(n), count: count, duration: duration))
        case "miscount":
            return .fault(.miscount(count: count, duration: duration))
        case "outage":
            guard let duration, duration > .zero else {
                throw ParseError(description: "seconds: required for an outage (the listener reopens after it)")
            }
            return .outage(duration)
        default:
            throw ParseError(description: "mode: unknown \"\(mode)\"; one of status, delay, max_batch, miscount, outage")
        }
    }

    var json: ContractValue {
        var o: [String: ContractValue] = [:]
        switch mode {
        case let .status(code, retryAfter):
            o["mode"] = .string("status")
            o["status"] = .int(code)
            if let retryAfter { o["retry_after"] = .string(retryAfter) }
        case let .delay(d):
            o["mode"] = .string("delay")
            o["delay_ms"] = .int(Int(d.milliseconds))
        case let .maxBatch(n):
            o["mode"] = .string("max_batch")
            o["records"] = .int(n)
        case .miscount:
            o["mode"] = .string("miscount")
        }
        if let count { o["count"] = .int(count) }
        return .object(o)
    }
}
