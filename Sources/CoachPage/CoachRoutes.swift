// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wall

/// `/coach` on the wall's listener: the sign-in form, the page, and its JSON calls.
///
/// Protection, in layers: the PIN opens a session held in an HttpOnly, SameSite=Strict
/// cookie (no secret in a URL); every change is a POST of JSON that must carry the
/// session's token in `X-CSRF-Token` and, when the browser names one, an `Origin` of this
/// very host (a page of another site can do neither); wrong PINs slow down (`CoachGuard`).
public struct CoachRoutes: WallRoutes {
    let guardian: CoachGuard
    let actions: any CoachActions

    public init(guardian: CoachGuard, actions: any CoachActions) {
        self.guardian = guardian
        self.actions = actions
    }

    public func handles(_ path: String) -> Bool { path == "/coach" || path.hasPrefix("/coach/") }

    public func respond(_ r: WallRequest) async -> WallResponse {
        let session = Self.cookie(r)
        switch (r.method, r.path) {
        case ("GET", "/coach"), ("HEAD", "/coach"):
            guard let csrf = guardian.csrf(session: session) else { return Self.html(200, CoachHTML.signIn(message: nil)) }
            return Self.html(200, CoachHTML.page(csrf: csrf))
        case ("POST", "/coach/signin"):
            guard Self.sameOrigin(r) else { return Self.html(403, CoachHTML.signIn(message: "Sign in from this gateway's own page.")) }
            let pin = Self.form(r.body)["pin"] ?? ""
            switch guardian.signIn(pin: pin, from: r.remoteAddress) {
            case let .signedIn(token):
                return WallResponse(status: 303, headers: [
                    ("Location", "/coach"),
                    ("Set-Cookie", "\(CoachGuard.cookie)=\(token); Path=/coach; HttpOnly; SameSite=Strict; Max-Age=\(Int(CoachGuard.sessionSeconds))"),
                ], text: "")
            case .wrongPIN:
                return Self.html(401, CoachHTML.signIn(message: "That PIN is not right."))
            case let .wait(seconds):
                return Self.html(429, CoachHTML.signIn(message: "Too many wrong PINs: try again in \(seconds) s."),
                                 headers: [("Retry-After", String(seconds))])
            }
        case ("GET", "/coach/api/state"):
            guard guardian.csrf(session: session) != nil else { return Self.problem(401, "sign in at /coach first") }
            return Self.json(200, await actions.state())
        case ("GET", "/coach/api/summary"):
            guard guardian.csrf(session: session) != nil else { return Self.problem(401, "sign in at /coach first") }
            guard let html = await actions.summaryHTML() else { return Self.problem(404, "no class has ended yet") }
            return Self.html(200, html)
        case ("POST", _) where r.path.hasPrefix("/coach/"):
            guard let csrf = guardian.csrf(session: session) else { return Self.problem(401, "sign in at /coach first") }
            guard Self.sameOrigin(r), let sent = r.header("X-CSRF-Token"), CoachGuard.same(Array(sent.utf8), Array(csrf.utf8)) else {
                return Self.problem(403, "refused: not sent by the coach page of this gateway")
            }
            if r.path == "/coach/signout" {
                guardian.signOut(session: session)
                return WallResponse(status: 200, contentType: "application/json", headers: [
                    ("Set-Cookie", "\(CoachGuard.cookie)=; Path=/coach; HttpOnly; SameSite=Strict; Max-Age=0"),
                ], text: "{}")
            }
            guard r.header("Content-Type")?.lowercased().hasPrefix("application/json") == true else {
                return Self.problem(415, "send JSON (Content-Type: application/json)")
            }
            do {
                try await act(r.path, r.body)
                return Self.json(200, await actions.state())
            } catch let failure as CoachFailure {
                return Self.problem(failure.status, failure.message)
            } catch {
                return Self.problem(400, "the request is not what the page sends: \(error)")
            }
        case (_, "/coach"), (_, "/coach/signin"), (_, "/coach/api/state"), (_, "/coach/api/summary"):
            return Self.problem(405, "method not allowed")
        default:
            return Self.problem(404, "not found")
        }
    }

    private struct StartBody: Decodable { var name: String; var type: String; var minutes: Int? }
    private struct StrapBody: Decodable {
        var address: String
        var clientID: String?
        var code: String?
        enum CodingKeys: String, CodingKey { case address, clientID = "client_id", code }
    }
    private struct ProfileBody: Decodable {
        var clientID: String
        var age: Int?
        var maxHR: Int?
        var weightKg: Double?
        enum CodingKeys: String, CodingKey { case clientID = "client_id", age, maxHR = "max_hr", weightKg = "weight_kg" }
    }

    private func act(_ path: String, _ body: [UInt8]) async throws {
        let decoder = JSONDecoder()
        let data = Data(body)
        switch path {
        case "/coach/api/class/start":
            let b = try decoder.decode(StartBody.self, from: data)
            if let m = b.minutes, !(1...600).contains(m) { throw CoachFailure("a class lasts 1 to 600 minutes") }
            try await actions.startClass(name: b.name, type: b.type, plannedMinutes: b.minutes)
        case "/coach/api/class/stop":
            try await actions.stopClass()
        case "/coach/api/straps/assign":
            let b = try decoder.decode(StrapBody.self, from: data)
            if let code = b.code?.trimmed, !code.isEmpty {
                try await actions.pair(address: b.address, code: code)
            } else if let client = b.clientID, !client.isEmpty {
                try await actions.assign(address: b.address, clientID: client)
            } else {
                throw CoachFailure("pick a member or enter their pairing code")
            }
        case "/coach/api/straps/unassign":
            try await actions.unassign(address: try decoder.decode(StrapBody.self, from: data).address)
        case "/coach/api/members/profile":
            let b = try decoder.decode(ProfileBody.self, from: data)
            if let a = b.age, !(5...120).contains(a) { throw CoachFailure("age: 5 to 120 years") }
            if let m = b.maxHR, !(100...240).contains(m) { throw CoachFailure("maximum heart rate: 100 to 240 bpm") }
            if let w = b.weightKg, !(20...350).contains(w) { throw CoachFailure("weight: 20 to 350 kg") }
            try await actions.saveProfile(clientID: b.clientID, CoachProfile(age: b.age, maxHR: b.maxHR, weightKg: b.weightKg))
        default:
            throw CoachFailure("no such action", status: 404)
        }
    }

    // MARK: HTTP pieces

    static func cookie(_ r: WallRequest) -> String? {
        for h in r.headers where h.name.lowercased() == "cookie" {
            for part in h.value.split(separator: ";") {
                let kv = part.trimmed.split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0] == CoachGuard.cookie, !kv[1].isEmpty { return String(kv[1]) }
            }
        }
        return nil
    }

    /// The browser's `Origin` (sent with every POST by current browsers) names this host,
    /// and `Sec-Fetch-Site`, when sent, says the same.
    static func sameOrigin(_ r: WallRequest) -> Bool {
        if let site = r.header("Sec-Fetch-Site")?.lowercased(), site != "same-origin", site != "none" { return false }
        guard let origin = r.header("Origin") else { return true }
        guard let host = r.header("Host") else { return false }
        let stripped = origin.lowercased().split(separator: "://", maxSplits: 1)
        return stripped.count == 2 && stripped[1] == host.lowercased()
    }

    /// `application/x-www-form-urlencoded` fields.
    static func form(_ body: [UInt8]) -> [String: String] {
        var out: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard let key = decode(kv[0]) else { continue }
            out[key] = kv.count == 2 ? decode(kv[1]) : ""
        }
        return out
    }

    static func decode(_ s: Substring) -> String? {
        var bytes: [UInt8] = []
        var it = Array(s.utf8).makeIterator()
        while let b = it.next() {
            switch b {
            case UInt8(ascii: "+"): bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let h = it.next(), let l = it.next(), let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(v)
            default: bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func html(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> WallResponse {
        var h = headers
        // The page is never framed by another site (clickjacking a sign-in or a stop).
        h.append(("X-Frame-Options", "DENY"))
        h.append(("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'"))
        return WallResponse(status: status, contentType: "text/html; charset=utf-8", headers: h, text: text)
    }

    static func json(_ status: Int, _ value: some Encodable) -> WallResponse {
        let body = (try? JSONEncoder().encode(value)).map(Array.init) ?? Array("{}".utf8)
        return WallResponse(status: status, contentType: "application/json", body: body)
    }

    private struct Problem: Encodable { var error: String }

    static func problem(_ status: Int, _ message: String) -> WallResponse { json(status, Problem(error: message)) }
}

extension StringProtocol {
    var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
