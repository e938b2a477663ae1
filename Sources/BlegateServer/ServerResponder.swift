// SPDX-License-Identifier: MIT
import CompressNIO
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import Logging
import NIOCore
import Outbox
import BackendContract

/// Routes every request: the gateway contract (docs/backend-openapi.yaml), the staff's
/// read endpoints and page, and a health check for load balancers.
struct ServerResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let store: ServerStore
    let logger: Logger
    /// The gym's zone, for the staff page's times.
    let time: LocalTime
    /// Where each answered request is counted and timed, by route.
    var metrics: ServerMetrics?

    static let maximumBody = 64 << 20

    /// How long a request may take, the database's answers included, before it is answered
    /// 503: shorter than a gateway's own deadline for an exchange (30 s), so a database that
    /// is down (PostgreSQL's pool keeps a request waiting for a connection for up to a
    /// minute) or stuck reaches the gateway as "retry later", not as a timeout.
    static let deadline: Duration = .seconds(15)

    struct DeadlineExceeded: Error, CustomStringConvertible {
        var limit: Duration = ServerResponder.deadline
        var description: String { "no answer from the database within \(limit)" }
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        let response = await answer(request)
        metrics?.request(route: Self.route(of: request.uri.path), method: Self.methodLabel(request.method),
                         status: Int(response.status.code), duration: ContinuousClock.now - started)
        return response
    }

    /// The route patterns `route(_:)` serves, as `/metrics` labels requests: a bounded set,
    /// with `other` for every path no route serves.
    static func route(of path: String) -> String {
        switch path {
        case "/healthz", "/api/v1/pair", "/api/v1/metrics", "/api/v1/samples", "/api/v1/profile-metrics", "/api/v1/workouts",
             "/api/v1/members", "/api/v1/assignments", "/api/v1/gateways", "/staff", "/staff/login", "/staff/logout",
             "/staff/pairing-codes", "/staff/members":
            return path
        default:
            break
        }
        func segments(after prefix: String) -> [Substring]? {
            guard path.hasPrefix(prefix) else { return nil }
            let rest = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            return rest.first?.isEmpty == false ? rest : nil
        }
        if let rest = segments(after: "/api/v1/members/") {
            if rest.count == 1 { return "/api/v1/members/{client_id}" }
            if rest.count == 2, ["workouts", "heart-rate", "workouts.csv"].contains(rest[1]) { return "/api/v1/members/{client_id}/\(rest[1])" }
        }
        if let rest = segments(after: "/staff/members/") {
            if rest.count == 1 { return "/staff/members/{client_id}" }
            if rest.count == 2, rest[1] == "workouts.csv" { return "/staff/members/{client_id}/workouts.csv" }
        }
        if let rest = segments(after: "/staff/classes/"), rest.count == 1 { return "/staff/classes/{key}" }
        return "other"
    }

    /// The request's method, `other` beyond the usual ones (a client may send any token).
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        switch method {
        case .get, .head, .post, .put, .delete, .patch, .options: method.rawValue
        default: "other"
        }
    }

    private func answer(_ request: Request) async -> Response {
        do {
            return try await Self.within(Self.deadline) { try await route(request) }
        } catch let error as HTTPError {
            return Self.json(Int(error.status.code), Self.error(error.body ?? "\(error.status)"))
        } catch {
            // A database that is down or failing: the gateway backs off and resends.
            logger.error("request \(request.method) \(request.uri.path) failed: \(String(reflecting: error))")
            var headers = HTTPFields()
            headers[.retryAfter] = "5"
            return Self.json(503, Self.error("storage unavailable, retry later"), headers: headers)
        }
    }

    private func route(_ request: Request) async throws -> Response {
        let path = request.uri.path
        switch (request.method, path) {
        case (.get, "/healthz"):
            // Within 2 s whatever the database does, for a load balancer's check; requests
            // still get their 15 s.
            let text: String
            let status: HTTPResponse.Status
            switch await DatabaseProbe.ping(store.database.client, within: Self.healthDeadline, logger: logger) {
            case .up: (status, text) = (.ok, "ok\n")
            case .down: (status, text) = (.serviceUnavailable, "database unavailable\n")
            case .late: (status, text) = (.serviceUnavailable, "database did not answer within 2 s\n")
            }
            return Response(status: status, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: text)))
        case (_, "/api/v1/pair"), (_, "/api/v1/metrics"), (_, "/api/v1/samples"), (_, "/api/v1/profile-metrics"):
            guard request.method == .post else { return Self.methodNotAllowed(request.method, path) }
            return try await gatewayRequest(request, path: path)
        case (_, "/api/v1/workouts"):
            guard request.method == .post || request.method == .put else { return Self.methodNotAllowed(request.method, path) }
            return try await gatewayRequest(request, path: path)
        case (_, "/api/v1/members"):
            guard request.method == .get else { return Self.methodNotAllowed(request.method, path) }
            let caller = try await gatewayCaller(request)
            guard caller.gateway != nil else { return caller.refusal! }
            return Self.json(200, MembersAnswer(members: try await store.members()))
        case (.put, _) where path.hasPrefix("/api/v1/members/"):
            return try await putMember(request, path: path)
        case (_, "/api/v1/assignments"):
            guard request.method == .post else { return Self.methodNotAllowed(request.method, path) }
            return try await assignment(request)
        case (.get, "/api/v1/gateways"):
            guard try await staffCaller(request) != nil else { return Self.json(401, Self.error("missing or unknown staff token")) }
            return Self.json(200, GatewaysAnswer(gateways: try await store.gateways().map(GatewaysAnswer.Gateway.init)))
        case (.get, _) where path.hasPrefix("/api/v1/members/"):
            guard try await staffCaller(request) != nil else { return Self.json(401, Self.error("missing or unknown staff token")) }
            return try await ReadEndpoints(store: store).member(request, path: path)
        case (.get, _) where path.hasPrefix("/staff/members/") && path.hasSuffix("/workouts.csv"):
            // The staff page's export link: the same CSV, with the page's cookie instead of a bearer token.
            guard let token = StaffPage.cookieToken(request), try await store.staff(token: token) != nil else {
                return Self.json(401, Self.error("sign in at /staff first"))
            }
            return try await ReadEndpoints(store: store).member(request, path: "/api/v1" + path.dropFirst("/staff".count))
        case (_, "/staff"), (_, "/staff/login"), (_, "/staff/logout"), (_, "/staff/pairing-codes"), (_, "/staff/members"):
            return try await StaffPage(store: store, time: time, metrics: metrics).respond(request)
        case (_, _) where path.hasPrefix("/staff/members/") || path.hasPrefix("/staff/classes/"):
            return try await StaffPage(store: store, time: time, metrics: metrics).respond(request)
        default:
            // A path served, by a method it does not take (TRACE, DELETE): 405, not 404.
            if Self.route(of: path) != "other" { return Self.methodNotAllowed(request.method, path) }
            return Self.json(404, Self.error("no such endpoint: \(request.method) \(path)"))
        }
    }

    private func bearer(_ request: Request) -> String? {
        guard let value = request.headers[.authorization], value.hasPrefix("Bearer ") else { return nil }
        let token = String(value.dropFirst(7)).trimmingSpaces
        return token.isEmpty ? nil : token
    }

    private func staffCaller(_ request: Request) async throws -> String? {
        guard let token = bearer(request) else { return nil }
        return try await store.staff(token: token)
    }

    /// The gateway a request's token belongs to (its contact noted), or the refusal.
    private func gatewayCaller(_ request: Request) async throws -> (gateway: String?, refusal: Response?) {
        guard let token = bearer(request) else { return (nil, Self.json(401, Self.error("missing bearer token"))) }
        let gateway: String
        switch try await store.caller(token: token) {
        case let .gateway(id): gateway = id
        case let .revoked(id): return (nil, Self.json(403, Self.error("the token of gateway \(id) was revoked")))
        case .unknown: return (nil, Self.json(401, Self.error("unknown bearer token")))
        }
        func header(_ name: String) -> String? { request.headers.first { $0.name.canonicalName == name }?.value }
        let depth = header("blegate-outbox-depth").flatMap { Int($0.trimmingSpaces) }.flatMap { $0 >= 0 ? $0 : nil }
        let version = header("blegate-version").map { String($0.trimmingSpaces.prefix(100)) }
        try await store.touch(gateway: gateway, outboxDepth: depth, version: version)
        return (gateway, nil)
    }

    /// A request's JSON object body, gzip or identity, with its text; or the refusal.
    private func objectBody(_ request: Request, guess: ContractValue.Guess) async throws
        -> (body: ContractValue, raw: ByteBuffer) {
        var request = request
        var raw = try await request.collectBody(upTo: Self.maximumBody)
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity"?: break
        case "gzip"?: raw = try raw.decompress(with: .gzip(), maxSize: Self.maximumBody * 4)
        case let other?: throw BodyRefusal(status: 415, message: "unsupported Content-Encoding \(other); use gzip")
        }
        let body: ContractValue
        do {
            body = try ContractValue.parse(Data(raw.readableBytesView), guess: guess)
        } catch {
            throw BodyRefusal(status: 400, message: "body is not gzip-compressed JSON: \(error)")
        }
        guard case .object = body else { throw BodyRefusal(status: 400, message: "body must be a JSON object") }
        return (body, raw)
    }

    /// Why a body was not read: answered with its status, never as a 503.
    struct BodyRefusal: Error {
        var status: Int
        var message: String
    }

    /// `objectBody` with its refusals as answers (413 for a body over the limit).
    private func readBody(_ request: Request, guess: ContractValue.Guess) async throws -> (body: ContractValue?, raw: ByteBuffer, refusal: Response?) {
        do {
            let (body, raw) = try await objectBody(request, guess: guess)
            return (body, raw, nil)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            return (nil, ByteBuffer(), Self.json(413, Self.error("body larger than \(Self.maximumBody) bytes")))
        } catch let refusal as BodyRefusal {
            return (nil, ByteBuffer(), Self.json(refusal.status, Self.error(refusal.message)))
        } catch {
            // Reading or inflating the body: the client's doing, not the database's.
            return (nil, ByteBuffer(), Self.json(400, Self.error("body is not gzip-compressed JSON: \(error)")))
        }
    }

    static let healthDeadline = Duration.seconds(2)

    private func gatewayRequest(_ request: Request, path: String) async throws -> Response {
        let caller = try await gatewayCaller(request)
        guard let gateway = caller.gateway else { return caller.refusal! }
        let read = try await readBody(request, guess: .gatewayRequest)
        guard let body = read.body else { return read.refusal! }
        let raw = read.raw

        if path == "/api/v1/pair" {
            if let problem = ContractValidation.pairProblem(body) { return Self.json(400, Self.error(problem)) }
            let code = body["code"]!.string!, device = body["device"]!, address = device["address"]!.string!
            switch try await store.pair(code: code.uppercased(), address: address, name: device["name"]?.string,
                                        model: device["model"]?.string, gateway: gateway) {
            case let .paired(clientID): return Self.json(200, PairAnswer(clientID: clientID))
            case .unknown: return Self.json(404, Self.error("unknown pairing code"))
            case .used: return Self.json(409, Self.error("pairing code already used"))
            case .expired: return Self.json(410, Self.error("pairing code expired"))
            }
        }
        if path == "/api/v1/samples" {
            guard case let .array(items)? = body["samples"] else { return Self.json(400, Self.error("samples: required array")) }
            for (i, s) in items.enumerated() {
                if let problem = ContractValidation.sampleProblem(s) { return Self.json(400, Self.error("samples[\(i)].\(problem)")) }
            }
            let (inserted, duplicates) = try await store.accept(samples: items, gateway: gateway)
            return Self.json(200, SamplesAnswer(inserted: inserted, duplicates: duplicates))
        }

        guard let named = body["gateway_id"]?.string, !named.isEmpty else {
            return Self.json(400, Self.error("gateway_id: required non-empty string"))
        }
        guard named == gateway else {
            return Self.json(403, Self.error("gateway_id \(named) does not match the token, which is gateway \(gateway)'s"))
        }
        let key = switch path {
        case "/api/v1/metrics": "records"
        case "/api/v1/workouts": "workouts"
        default: "metrics"
        }
        guard case let .array(items)? = body[key] else { return Self.json(400, Self.error("\(key): required array")) }
        let outcome: BatchOutcome = switch path {
        case "/api/v1/metrics": try await store.accept(records: items, body: String(buffer: raw), gateway: gateway)
        case "/api/v1/workouts": try await store.accept(workouts: items, gateway: gateway, replace: request.method == .put)
        default: try await store.accept(profileMetrics: items, gateway: gateway)
        }
        return Self.json(200, outcome.answer)
    }

    /// `PUT /api/v1/members/{client_id}`: a gateway changes a member's name or profile.
    private func putMember(_ request: Request, path: String) async throws -> Response {
        let segment = path.dropFirst("/api/v1/members/".count)
        guard !segment.isEmpty, !segment.contains("/"), let clientID = String(segment).removingPercentEncoding else {
            return Self.json(404, Self.error("no such endpoint: PUT \(path)"))
        }
        // PostgreSQL's text cannot hold a NUL, so no member's id has one.
        guard !clientID.contains("\u{0}") else { return Self.json(404, Self.error("unknown member")) }
        let caller = try await gatewayCaller(request)
        guard caller.gateway != nil else { return caller.refusal! }
        let read = try await readBody(request, guess: .any)
        guard let body = read.body else { return read.refusal! }
        do {
            let changes = try MemberChanges(json: body)
            guard let member = try await store.updateMember(clientID, changes) else {
                return Self.json(404, Self.error("unknown member \(clientID)"))
            }
            return Self.json(200, member)
        } catch let problem as MemberProblem {
            return Self.json(problem.conflict ? 409 : 400, Self.error(problem.description))
        }
    }

    /// `POST /api/v1/assignments`: a strap worn by a member from now on, or by nobody.
    private func assignment(_ request: Request) async throws -> Response {
        let caller = try await gatewayCaller(request)
        guard let gateway = caller.gateway else { return caller.refusal! }
        let read = try await readBody(request, guess: .any)
        guard let body = read.body else { return read.refusal! }
        guard case let .object(o) = body else { return Self.json(400, Self.error("body must be a JSON object")) }
        let known: Set = ["address", "client_id", "name", "model"]
        if let other = o.keys.sorted().first(where: { !known.contains($0) }) {
            return Self.json(400, Self.error("\(other): not an assignment field (address, client_id, name, model)"))
        }
        guard let text = o["address"]?.string, let address = StrapAddress.normalized(text) else {
            return Self.json(400, Self.error("address: must be a Bluetooth address AA:BB:CC:DD:EE:FF"))
        }
        let clientID: String?
        switch o["client_id"] {
        case .null?: clientID = nil
        case let .string(s)? where !s.isEmpty: clientID = s
        default: return Self.json(400, Self.error("client_id: required, a member's client id or null to unassign"))
        }
        var labels: [String?] = []
        for key in ["name", "model"] {
            switch o[key] {
            case nil, .null?: labels.append(nil)
            case let .string(s)? where s.utf8.count <= 200 && !s.contains("\u{0}"): labels.append(s)
            default: return Self.json(400, Self.error("\(key): must be a string of at most 200 bytes without NUL, or null"))
            }
        }
        if let clientID, clientID.contains("\u{0}") { return Self.json(404, Self.error("unknown member")) }
        switch try await store.assign(address: address, clientID: clientID, name: labels[0], model: labels[1], gateway: gateway) {
        case .assigned: return Self.json(200, AssignmentAnswer(address: address, clientID: clientID))
        case .unknownMember: return Self.json(404, Self.error("unknown member \(clientID ?? "")"))
        }
    }

    // MARK: Helpers

    /// `body`'s answer, or `DeadlineExceeded` once `limit` has passed. `body` is then
    /// cancelled but not waited for: PostgreSQL's pool may keep it waiting for a
    /// connection long after, and the answer must not (a task group would wait for it).
    /// What it still does is harmless: every write is idempotent, and its sender resends.
    static func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (answer: CheckedContinuation<T, any Error>) in
            let once = Once()
            let work = Task {
                do {
                    let value = try await body()
                    if once.first() { answer.resume(returning: value) }
                } catch {
                    if once.first() { answer.resume(throwing: error) }
                }
            }
            Task {
                try? await Task.sleep(for: limit)
                if once.first() {
                    work.cancel()
                    answer.resume(throwing: DeadlineExceeded(limit: limit))
                }
            }
        }
    }

    /// 405 with the `Allow` header RFC 9110 asks for: the methods the path's route takes.
    static func methodNotAllowed(_ method: HTTPRequest.Method, _ path: String) -> Response {
        let allow = allowedMethods(route(of: path))
        var headers = HTTPFields()
        headers[.allow] = allow
        return json(405, error("\(method) is not taken at \(path); use \(allow)"), headers: headers)
    }

    static func allowedMethods(_ route: String) -> String {
        switch route {
        case "/healthz", "/api/v1/members", "/api/v1/gateways": "GET"
        case "/api/v1/workouts": "POST, PUT"
        case "/api/v1/members/{client_id}": "GET, PUT"
        case _ where route.hasPrefix("/api/v1/members/"): "GET"
        case _ where route.hasPrefix("/staff"): "GET, POST"
        default: "POST"
        }
    }

    static func error(_ message: String) -> ErrorAnswer { ErrorAnswer(message) }

    static func json(_ status: Int, _ body: some Encodable, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: .init(code: status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: ContractValue.encoded(body))))
    }
}

/// `GET /api/v1/gateways`: each gateway's health for the staff; unknown values are null.
struct GatewaysAnswer: Encodable {
    struct Gateway: Encodable {
        var id: String
        var revoked: Bool
        var lastContact: String?
        var secondsSinceContact: Double?
        var outboxDepth: Int?
        var version: String?
        var requests: Int

        enum CodingKeys: String, CodingKey {
            case id, revoked, version, requests
            case lastContact = "last_contact"
            case secondsSinceContact = "seconds_since_contact"
            case outboxDepth = "outbox_depth"
        }

        init(_ g: ServerStore.GatewayInfo) {
            id = g.id
            revoked = g.revoked
            lastContact = g.lastContact
            secondsSinceContact = g.secondsSinceContact.map { ($0 * 10).rounded() / 10 }
            outboxDepth = g.outboxDepth
            version = g.version
            requests = g.requests
        }

        /// Written out, not synthesized: the synthesized form leaves out nil members, and
        /// the staff's tools expect each key, null when unknown.
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(revoked, forKey: .revoked)
            try c.encode(lastContact, forKey: .lastContact)
            try c.encode(secondsSinceContact, forKey: .secondsSinceContact)
            try c.encode(outboxDepth, forKey: .outboxDepth)
            try c.encode(version, forKey: .version)
            try c.encode(requests, forKey: .requests)
        }
    }

    var gateways: [Gateway]
}

/// `GET /api/v1/members`: every member, by name.
struct MembersAnswer: Encodable {
    var members: [Member]
}

/// `POST /api/v1/assignments`'s answer: the address as stored and its member, or null.
struct AssignmentAnswer: Encodable {
    var address: String
    var clientID: String?

    enum CodingKeys: String, CodingKey {
        case address
        case clientID = "client_id"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(address, forKey: .address)
        try c.encode(clientID, forKey: .clientID)
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
