// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import Outbox
import Synchronization
import BackendContract

/// Everything the test backend holds: accepted records and samples (each id once), pairing
/// codes, and a log of requests. With a data file, every accepted item is appended as one
/// JSON line and read back on start, so a restarted backend still de-duplicates.
public final class BackendStore: Sendable {
    struct State {
        var records: [StoredRecord] = []
        var recordIDs: Set<String> = []
        var samples: [StoredSample] = []
        var sampleUUIDs: Set<String> = []
        var codes: Set<String> = []
        var pairings: [String: Pairing] = [:]
        var requests: [RequestLogEntry] = []
        var token: String?
        var workouts: [BackendDocument] = []
        var workoutIndex: [String: Int] = [:]
        var profileMetrics: [BackendDocument] = []
        var profileMetricIDs: Set<String> = []
        var gateways: [String: GatewayHeaders] = [:]
    }

    public struct DataFileError: Error, CustomStringConvertible {
        public var description: String
    }

    let state: Mutex<State>
    private let dataFile: Int32?
    public let dataFilePath: String?

    init(token: String?, codes: [String], dataFile: String?) throws {
        var s = State()
        s.token = token
        s.codes = Set(codes)
        if let dataFile {
            try Self.load(dataFile, into: &s)
            let fd = open(dataFile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw DataFileError(description: "cannot open \(dataFile) for appending: \(String(cString: strerror(errno)))")
            }
            self.dataFile = fd
        } else {
            self.dataFile = nil
        }
        self.dataFilePath = dataFile
        self.state = Mutex(s)
    }

    deinit {
        if let dataFile { close(dataFile) }
    }

    public var records: [StoredRecord] { state.withLock { $0.records } }
    public var samples: [StoredSample] { state.withLock { $0.samples } }
    public var pairings: [Pairing] { state.withLock { Array($0.pairings.values) } }
    public var requests: [RequestLogEntry] { state.withLock { $0.requests } }
    /// Workouts in arrival order, each id once, in its latest form.
    public var workouts: [BackendDocument] { state.withLock { $0.workouts } }
    public var profileMetrics: [BackendDocument] { state.withLock { $0.profileMetrics } }
    /// Per gateway id, the headers of its last request that named it.
    public var gateways: [String: GatewayHeaders] { state.withLock { $0.gateways } }

    /// The bearer token requests must carry; nil accepts any request.
    public var token: String? {
        get { state.withLock { $0.token } }
        set { state.withLock { $0.token = newValue } }
    }

    /// Makes more pairing codes valid.
    public func addCodes(_ codes: [String]) {
        state.withLock { $0.codes.formUnion(codes) }
    }

    func log(_ entry: RequestLogEntry) {
        state.withLock { $0.requests.append(entry) }
    }

    /// Stores the valid, new records; returns (inserted, duplicates, rejected).
    func accept(records: [ContractValue], gatewayID: String) -> (Int, Int, [(id: String, reason: String)]) {
        var lines: [String] = []
        let result = state.withLock { s -> (Int, Int, [(id: String, reason: String)]) in
            var inserted = 0, duplicates = 0
            var rejected: [(id: String, reason: String)] = []
            for r in records {
                if let problem = ContractValidation.recordProblem(r) {
                    rejected.append((r["id"]?.string ?? "", problem))
                    continue
                }
                let id = r["id"]!.string!.lowercased()
                guard s.recordIDs.insert(id).inserted else {
                    duplicates += 1
                    continue
                }
                s.records.append(StoredRecord(id: id, clientID: r["client_id"]?.string, gatewayID: gatewayID,
                                              deviceID: r["device_id"]!.string!, timestamp: r["timestamp"]!.string!, json: r))
                inserted += 1
                if dataFile != nil {
                    lines.append(ContractValue.object(["kind": .string("record"), "gateway_id": .string(gatewayID), "record": r]).text)
                }
            }
            return (inserted, duplicates, rejected)
        }
        append(lines)
        return result
    }

    func noteHeaders(gatewayID: String, _ headers: GatewayHeaders) {
        state.withLock { $0.gateways[gatewayID] = headers }
    }

    /// Stores valid workouts (`replace`: a `PUT`, which replaces known ids and inserts new
    /// ones) or profile metrics; returns (inserted, duplicates, rejected). A replaced
    /// workout counts as a duplicate: the backend already held its id.
    func accept(documents: [ContractValue], workouts: Bool, replace: Bool, gatewayID: String) -> (Int, Int, [(id: String, reason: String)]) {
        var lines: [String] = []
        let result = state.withLock { s -> (Int, Int, [(id: String, reason: String)]) in
            var inserted = 0, duplicates = 0
            var rejected: [(id: String, reason: String)] = []
            for d in documents {
                if let problem = workouts ? ContractValidation.workoutProblem(d) : ContractValidation.profileMetricProblem(d) {
                    rejected.append((d["id"]?.string ?? "", problem))
                    continue
                }
                let id = d["id"]!.string!.lowercased()
                if workouts {
                    if let i = s.workoutIndex[id] {
                        duplicates += 1
                        guard replace else { continue }
                        s.workouts[i].json = d
                        s.workouts[i].replacements += 1
                    } else {
                        s.workoutIndex[id] = s.workouts.count
                        s.workouts.append(BackendDocument(id: id, gatewayID: gatewayID, json: d, replacements: 0))
                        inserted += 1
                    }
                } else {
                    guard s.profileMetricIDs.insert(id).inserted else {
                        duplicates += 1
                        continue
                    }
                    s.profileMetrics.append(BackendDocument(id: id, gatewayID: gatewayID, json: d, replacements: 0))
                    inserted += 1
                }
                if dataFile != nil {
                    lines.append(ContractValue.object(["kind": .string(workouts ? "workout" : "profile_metric"),
                                              "gateway_id": .string(gatewayID), "document": d]).text)
                }
            }
            return (inserted, duplicates, rejected)
        }
        append(lines)
        return result
    }

    /// Stores new samples; returns (inserted, duplicates).
    func accept(samples: [StoredSample]) -> (Int, Int) {
        var lines: [String] = []
        let result = state.withLock { s -> (Int, Int) in
            var inserted = 0, duplicates = 0
            for sample in samples {
                guard s.sampleUUIDs.insert(sample.uuid.lowercased()).inserted else {
                    duplicates += 1
                    continue
                }
                s.samples.append(sample)
                inserted += 1
                if dataFile != nil { lines.append(ContractValue.object(["kind": .string("sample"), "sample": sample.json]).text) }
            }
            return (inserted, duplicates)
        }
        append(lines)
        return result
    }

    enum PairOutcome {
        case paired(String)
        case unknown
        case used
    }

    func pair(code: String, device: ContractValue) -> PairOutcome {
        var line: String?
        let outcome = state.withLock { s -> PairOutcome in
            if s.pairings[code] != nil { return .used }
            guard s.codes.contains(code) else { return .unknown }
            let clientID = Self.randomUUID()
            s.pairings[code] = Pairing(code: code, clientID: clientID, device: device)
            if dataFile != nil {
                line = ContractValue.object(["kind": .string("pairing"), "code": .string(code), "client_id": .string(clientID), "device": device]).text
            }
            return .paired(clientID)
        }
        if let line { append([line]) }
        return outcome
    }

    private func append(_ lines: [String]) {
        guard let dataFile, !lines.isEmpty else { return }
        var text = lines.joined(separator: "\n")
        text += "\n"
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(dataFile, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 { if errno == EINTR { continue }; return }
                offset += n
            }
        }
    }

    private static func load(_ path: String, into s: inout State) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw DataFileError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw DataFileError(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        for (number, line) in bytes.split(separator: UInt8(ascii: "\n")).enumerated() {
            guard let entry = try? ContractValue.parse(Array(line)) else {
                throw DataFileError(description: "\(path) line \(number + 1) is not JSON; not a blegate-test-backend data file?")
            }
            switch entry["kind"]?.string {
            case "record":
                guard let r = entry["record"], let id = r["id"]?.string?.lowercased() else { continue }
                if s.recordIDs.insert(id).inserted {
                    s.records.append(StoredRecord(id: id, clientID: r["client_id"]?.string, gatewayID: entry["gateway_id"]?.string ?? "",
                                                  deviceID: r["device_id"]?.string ?? "", timestamp: r["timestamp"]?.string ?? "", json: r))
                }
            case "sample":
                guard let j = entry["sample"], let uuid = j["uuid"]?.string?.lowercased() else { continue }
                if s.sampleUUIDs.insert(uuid).inserted {
                    s.samples.append(StoredSample(uuid: uuid, dataType: j["dataType"]?.string ?? "", value: j["value"]?.number ?? 0, json: j))
                }
            case "workout":
                guard let d = entry["document"], let id = d["id"]?.string?.lowercased() else { continue }
                let gateway = entry["gateway_id"]?.string ?? ""
                if let i = s.workoutIndex[id] {
                    s.workouts[i].json = d
                    s.workouts[i].replacements += 1
                } else {
                    s.workoutIndex[id] = s.workouts.count
                    s.workouts.append(BackendDocument(id: id, gatewayID: gateway, json: d, replacements: 0))
                }
            case "profile_metric":
                guard let d = entry["document"], let id = d["id"]?.string?.lowercased() else { continue }
                if s.profileMetricIDs.insert(id).inserted {
                    s.profileMetrics.append(BackendDocument(id: id, gatewayID: entry["gateway_id"]?.string ?? "", json: d, replacements: 0))
                }
            case "pairing":
                guard let code = entry["code"]?.string, let client = entry["client_id"]?.string else { continue }
                s.pairings[code] = Pairing(code: code, clientID: client, device: entry["device"] ?? .null)
            default:
                continue
            }
        }
    }

    static func randomUUID() -> String {
        var g = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for (i, b) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(i) { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
