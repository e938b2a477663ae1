// SPDX-License-Identifier: MIT
import CompressNIO
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird
import NIOCore
import Outbox
import Timing
import BackendContract

/// Answers the contract's endpoints (docs/backend-openapi.yaml) and the `/_admin` ones.
struct BackendResponder: HTTPResponder {
    typealias Context = ConnectionContext

    let store: BackendStore
    let faults: FaultInjector
    let samplesPath: String
    let started: ContinuousClock.Instant
    /// Closes the listener for this long, then reopens it (`{"mode":"outage"}`).
    let outage: @Sendable (Duration) -> Void
    let connections: OpenConnections
    /// false: `PUT /api/v1/workouts` is answered `refusedCorrectionStatus`, as by a backend
    /// without corrections.
    let acceptsWorkoutCorrections: Bool
    /// 405 (the route exists for POST only) or 404 (no such route for PUT).
    let refusedCorrectionStatus: Int

    static let maximumBody = 64 << 20

    private enum Route {
        case pair, metrics, samples, workouts, profileMetrics
    }

    static let depthHeader = HTTPField.Name("Blegate-Outbox-Depth")!
    static let versionHeader = HTTPField.Name("Blegate-Version")!

    func respond(to request: Request, context: Context) async throws -> Response {
        connections.track(context.channel)
        let path = request.uri.path
        if path == "/_admin" || path.hasPrefix("/_admin/") { return try await admin(request, path: path) }
        let arrived = ContinuousClock.now
        let route: Route? = switch path {
        case "/api/v1/pair": .pair
        case "/api/v1/metrics": .metrics
        case "/api/v1/workouts": .workouts
        case "/api/v1/profile-metrics": .profileMetrics
        case samplesPath: .samples
        default: nil
        }
        let gzip = request.headers[.contentEncoding]?.lowercased() == "gzip"
        let authorized = store.token.map { request.headers[.authorization] == "Bearer " + $0 } ?? true
        let depth = request.headers[Self.depthHeader].flatMap { Int($0) }
        let version = request.headers[Self.versionHeader]
        func answer(_ status: Int, _ body: some Encodable, items: Int? = nil, headers: HTTPFields = [:]) -> Response {
            store.log(RequestLogEntry(at: arrived, method: request.method.rawValue, path: path, status: status, gzip: gzip,
                                      items: items, authorized: authorized, outboxDepth: depth, version: version))
            return Self.json(status, body, headers: headers)
        }
        guard let route else { return answer(404, Self.error("no such endpoint: \(path)")) }
        let replace = route == .workouts && request.method == .put
        if replace && !acceptsWorkoutCorrections {
            if refusedCorrectionStatus == 404 { return answer(404, Self.error("no such endpoint: PUT \(path)")) }
            return answer(refusedCorrectionStatus, Self.error("this backend does not accept workout corrections"), headers: [.allow: "POST"])
        }
        guard request.method == .post || replace else { return answer(405, Self.error("use POST")) }

        let (delay, injected) = faults.beforeHandling()
        if delay > .zero { try await Task.sleep(for: delay) }
        if let injected {
            var headers: HTTPFields = [:]
            if let retryAfter = injected.retryAfter { headers[.retryAfter] = retryAfter }
            return answer(injected.code, Self.error("injected fault: \(injected.code)"), headers: headers)
        }
        guard authorized else { return answer(401, Self.error("missing or wrong bearer token")) }

        var request = request
        let body: ContractValue
        do {
            var raw = try await request.collectBody(upTo: Self.maximumBody)
            switch request.headers[.contentEncoding]?.lowercased() {
            case nil, "identity"?: break
            case "gzip"?: raw = try raw.decompress(with: .gzip(), maxSize: Self.maximumBody * 4)
            case let other?: return answer(415, Self.error("unsupported Content-Encoding \(other); use gzip"))
            }
            body = try ContractValue.parse(Data(raw.readableBytesView), guess: .gatewayRequest)
        } catch {
            return answer(400, Self.error("body is not gzip-compressed JSON: \(error)"))
        }

        switch route {
        case .pair:
            if let problem = ContractValidation.pairProblem(body) { return answer(400, Self.error(problem)) }
            let code = body["code"]!.string!, device = body["device"]!
            switch store.pair(code: code, device: device) {
            case let .paired(clientID): return answer(200, PairAnswer(clientID: clientID))
            case .unknown: return answer(404, Self.error("unknown pairing code"))
            case .used: return answer(409, Self.error("pairing code already used"))
            }
        case .metrics:
            guard let gateway = body["gateway_id"]?.string, !gateway.isEmpty else {
                return answer(400, Self.error("gateway_id: required non-empty string"))
            }
            guard let records = body["records"]?.array else { return answer(400, Self.error("records: required array")) }
            if faults.refusesBatch(of: records.count) {
                return answer(413, Self.error("batch of \(records.count) records is too large"), items: records.count)
            }
            store.noteHeaders(gatewayID: gateway, GatewayHeaders(outboxDepth: depth, version: version))
            let (stored, duplicates, rejected) = store.accept(records: records, gatewayID: gateway)
            let inserted = faults.miscounts() ? Self.miscounted(stored) : stored
            return answer(200, BatchAnswer(inserted: inserted, duplicates: duplicates,
                                           rejected: rejected.map { BatchAnswer.Rejected(id: $0.id, reason: $0.reason) }), items: records.count)
        case .workouts, .profileMetrics:
            guard let gateway = body["gateway_id"]?.string, !gateway.isEmpty else {
                return answer(400, Self.error("gateway_id: required non-empty string"))
            }
            let key = route == .workouts ? "workouts" : "metrics"
            guard let documents = body[key]?.array else { return answer(400, Self.error("\(key): required array")) }
            if faults.refusesBatch(of: documents.count) {
                return answer(413, Self.error("batch of \(documents.count) \(key) is too large"), items: documents.count)
            }
            store.noteHeaders(gatewayID: gateway, GatewayHeaders(outboxDepth: depth, version: version))
            let (stored, duplicates, rejected) = store.accept(documents: documents, workouts: route == .workouts, replace: replace,
                                                              gatewayID: gateway)
            let inserted = faults.miscounts() ? Self.miscounted(stored) : stored
            return answer(200, BatchAnswer(inserted: inserted, duplicates: duplicates,
                                           rejected: rejected.map { BatchAnswer.Rejected(id: $0.id, reason: $0.reason) }), items: documents.count)
        case .samples:
            guard let items = body["samples"]?.array else { return answer(400, Self.error("samples: required array")) }
            var samples: [StoredSample] = []
            for (i, s) in items.enumerated() {
                if let problem = ContractValidation.sampleProblem(s) { return answer(400, Self.error("samples[\(i)].\(problem)")) }
                // The check above holds these.
                samples.append(StoredSample(uuid: s["uuid"]!.string!, dataType: s["dataType"]!.string!, value: s["value"]!.number!, json: s))
            }
            if faults.refusesBatch(of: samples.count) {
                return answer(413, Self.error("batch of \(samples.count) samples is too large"), items: samples.count)
            }
            let (inserted, duplicates) = store.accept(samples: samples)
            return answer(200, SamplesAnswer(inserted: inserted, duplicates: duplicates), items: samples.count)
        }
    }

    /// `inserted` for a miscounted answer: one fewer, or one more when none was inserted,
    /// so the counts never add up to the batch.
    static func miscounted(_ inserted: Int) -> Int { inserted > 0 ? inserted - 1 : 1 }

    // MARK: Admin

    private func admin(_ request: Request, path: String) async throws -> Response {
        var request = request
        func body() async throws -> ContractValue {
            let raw = try await request.collectBody(upTo: 1 << 20)
            return raw.readableBytes == 0 ? .object([:]) : try ContractValue.parse(Data(raw.readableBytesView))
        }
        switch (request.method, path) {
        case (.get, "/_admin/records"):
            let records = store.records
            return Self.json(200, ContractValue.object([
                "count": .int(records.count),
                "records": .array(records.map { .object(["gateway_id": .string($0.gatewayID), "record": $0.json]) }),
            ]))
        case (.get, "/_admin/samples"):
            let samples = store.samples
            return Self.json(200, ContractValue.object(["count": .int(samples.count), "samples": .array(samples.map(\.json))]))
        case (.get, "/_admin/workouts"), (.get, "/_admin/profile-metrics"):
            let documents = path == "/_admin/workouts" ? store.workouts : store.profileMetrics
            return Self.json(200, ContractValue.object([
                "count": .int(documents.count),
                "items": .array(documents.map {
                    .object(["gateway_id": .string($0.gatewayID), "replacements": .int($0.replacements), "document": $0.json])
                }),
            ]))
        case (.get, "/_admin/gateways"):
            return Self.json(200, ContractValue.object(store.gateways.mapValues { g in
                .object(["outbox_depth": g.outboxDepth.map { .int($0) } ?? .null, "version": g.version.map { .string($0) } ?? .null])
            }))
        case (.get, "/_admin/pairings"):
            return Self.json(200, ContractValue.object(["pairings": .array(store.pairings.map {
                .object(["code": .string($0.code), "client_id": .string($0.clientID), "device": $0.device])
            })]))
        case (.get, "/_admin/requests"):
            return Self.json(200, ContractValue.object(["requests": .array(store.requests.map { e in
                .object([
                    "at_ms": .int(Int((e.at - started).milliseconds)),
                    "method": .string(e.method), "path": .string(e.path), "status": .int(e.status),
                    "gzip": .bool(e.gzip), "items": e.items.map { .int($0) } ?? .null, "authorized": .bool(e.authorized),
                ])
            })]))
        case (.get, "/_admin/faults"):
            return Self.json(200, ContractValue.object(["faults": .array(faults.faults.map(\.json))]))
        case (.delete, "/_admin/faults"):
            faults.clear()
            return Self.json(200, ContractValue.object(["faults": .array([])]))
        case (.post, "/_admin/faults"):
            let json: ContractValue
            do { json = try await body() } catch { return Self.json(400, Self.error("body must be JSON: \(error)")) }
            let items = json["faults"]?.array ?? [json]
            var parsed: [Fault.Request] = []
            do {
                for item in items { parsed.append(try Fault.request(item)) }
            } catch {
                return Self.json(400, Self.error("\(error)"))
            }
            for p in parsed {
                switch p {
                case let .fault(f): faults.add(f)
                case let .outage(d): outage(d)
                }
            }
            return Self.json(200, ContractValue.object(["faults": .array(faults.faults.map(\.json))]))
        case (.post, "/_admin/token"):
            guard let json = try? await body() else { return Self.json(400, Self.error("body must be JSON")) }
            store.token = json["token"]?.string
            return Self.json(200, ContractValue.object([:]))
        case (.post, "/_admin/codes"):
            guard let codes = (try? await body())?["codes"]?.array?.compactMap(\.string) else {
                return Self.json(400, Self.error("codes: required array of strings"))
            }
            store.addCodes(codes)
            return Self.json(200, ContractValue.object([:]))
        default:
            return Self.json(404, Self.error("no such admin endpoint: \(request.method.rawValue) \(path)"))
        }
    }

    // MARK: Helpers

    static func error(_ message: String) -> ErrorAnswer { ErrorAnswer(message) }

    static func json(_ status: Int, _ body: some Encodable, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: .init(code: status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: ContractValue.encoded(body))))
    }
}
