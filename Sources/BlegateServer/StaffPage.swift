// SPDX-License-Identifier: MIT
import Hummingbird
import NIOCore

/// `/staff`: one server-rendered page for the gym's staff (members, pairing codes,
/// gateways and their health, the last classes) and a form that makes a pairing code.
/// Plain HTML forms, no script: it works in any browser, and the staff token travels in
/// an HttpOnly, SameSite=Strict cookie, which also keeps other sites from posting the form.
struct StaffPage {
    let store: ServerStore

    static let cookie = "blegate_staff"
    /// A gateway silent for longer than this is shown as offline.
    static let offlineSeconds = 120.0

    func respond(_ request: Request) async throws -> Response {
        var request = request
        let path = request.uri.path
        switch (request.method, path) {
        case (.get, "/staff"):
            guard let token = Self.cookieToken(request), try await store.staff(token: token) != nil else {
                return html(200, loginPage(message: nil))
            }
            let newCode = request.uri.queryParameters["new"].map(String.init)
            return html(200, try await page(newCode: newCode))
        case (.post, "/staff/login"):
            let form = try await formFields(&request)
            guard let token = form["token"], try await store.staff(token: token) != nil else {
                return html(401, loginPage(message: "That staff token is not valid."))
            }
            return redirect("/staff", cookie: "\(Self.cookie)=\(token); Path=/staff; HttpOnly; SameSite=Strict")
        case (.post, "/staff/logout"):
            return redirect("/staff", cookie: "\(Self.cookie)=; Path=/staff; HttpOnly; SameSite=Strict; Max-Age=0")
        case (.post, "/staff/pairing-codes"):
            guard let token = Self.cookieToken(request), try await store.staff(token: token) != nil else {
                return html(401, loginPage(message: "Sign in first."))
            }
            let form = try await formFields(&request)
            guard let client = form["client_id"], !client.isEmpty else {
                return html(400, try await page(newCode: nil, problem: "A member id is needed for a pairing code."))
            }
            let hours = form["hours"].flatMap(Double.init) ?? 24
            guard hours > 0, hours <= 24 * 30 else {
                return html(400, try await page(newCode: nil, problem: "A code is valid for 1 hour to 30 days."))
            }
            let made = try await store.createPairingCode(clientID: client, validSeconds: Int(hours * 3600))
            return redirect("/staff?new=\(made.code)", cookie: nil)
        default:
            return html(405, "<p>Use GET /staff.</p>")
        }
    }

    static func cookieToken(_ request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for part in header.split(separator: ";") {
                let kv = part.trimmingSpaces.split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0] == Self.cookie, !kv[1].isEmpty { return String(kv[1]) }
            }
        }
        return nil
    }

    private func formFields(_ request: inout Request) async throws -> [String: String] {
        let raw = try await request.collectBody(upTo: 64 << 10)
        var out: [String: String] = [:]
        for pair in String(decoding: raw.readableBytesView, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard let key = String(kv[0]).formDecoded else { continue }
            out[key] = kv.count == 2 ? String(kv[1]).formDecoded?.trimmingSpaces : ""
        }
        return out
    }

    private func page(newCode: String?, problem: String? = nil) async throws -> String {
        let members = try await store.members()
        let codes = try await store.pairingCodes()
        let gateways = try await store.gateways()
        let classes = try await store.lastClasses()
        var b = ""
        if let problem { b += "<p class=\"problem\" role=\"alert\">\(Self.escape(problem))</p>" }
        if let newCode, let made = codes.first(where: { $0.code == newCode }) {
            b += "<p class=\"new-code\" data-new-code=\"\(Self.escape(made.code))\">New pairing code for \(Self.escape(made.clientID)): "
            b += "<strong>\(Self.escape(made.code))</strong>, valid until \(Self.escape(made.expiresAt)).</p>"
        }
        b += "<section id=\"gateways\"><h2>Gateways</h2><table><thead><tr><th>Gateway</th><th>Health</th><th>Last contact</th>"
        b += "<th>Outbox</th><th>Version</th><th>Requests</th></tr></thead><tbody>"
        for g in gateways {
            let health = g.revoked ? "revoked" : g.secondsSinceContact.map { $0 <= Self.offlineSeconds ? "online" : "offline" } ?? "never seen"
            b += "<tr data-gateway=\"\(Self.escape(g.id))\" data-health=\"\(health)\"><td>\(Self.escape(g.id))</td><td>\(health)</td>"
            b += "<td>\(Self.escape(g.lastContact ?? "–"))</td><td>\(g.outboxDepth.map(String.init) ?? "–")</td>"
            b += "<td>\(Self.escape(g.version ?? "–"))</td><td>\(g.requests)</td></tr>"
        }
        b += "</tbody></table></section>"
        b += "<section id=\"classes\"><h2>Last classes</h2><table><thead><tr><th>Class</th><th>Started</th><th>Members</th>"
        b += "<th>Average HR</th><th>Gateways</th></tr></thead><tbody>"
        for c in classes {
            b += "<tr data-class=\"\(Self.escape(c.className))\"><td>\(Self.escape(c.className))</td><td>\(Self.escape(c.start))</td>"
            b += "<td data-field=\"members\">\(c.members)</td><td>\(Int(c.avgHR.rounded()))</td><td>\(Self.escape(c.gateways.joined(separator: ", ")))</td></tr>"
        }
        b += "</tbody></table></section>"
        b += "<section id=\"members\"><h2>Members</h2><table><thead><tr><th>Member</th><th>Workouts</th><th>Last workout</th>"
        b += "<th>Straps</th><th>Export</th></tr></thead><tbody>"
        for m in members {
            b += "<tr data-member=\"\(Self.escape(m.clientID))\"><td>\(Self.escape(m.clientID))</td><td data-field=\"workouts\">\(m.workouts)</td>"
            b += "<td>\(Self.escape(m.lastWorkout ?? "–"))</td><td>\(Self.escape(m.devices.joined(separator: ", ")))</td>"
            let csv = "/staff/members/\(Self.percentEncoded(m.clientID))/workouts.csv"
            b += "<td>\(m.workouts > 0 ? "<a href=\"\(Self.escape(csv))\" data-csv>workouts.csv</a>" : "")</td></tr>"
        }
        b += "</tbody></table></section>"
        b += "<section id=\"pairing\"><h2>Pairing codes</h2>"
        b += "<form method=\"post\" action=\"/staff/pairing-codes\"><label>Member id <input name=\"client_id\" required></label> "
        b += "<label>Valid for (hours) <input name=\"hours\" value=\"24\" size=\"4\"></label> <button type=\"submit\">Make a code</button></form>"
        b += "<table><thead><tr><th>Code</th><th>Member</th><th>State</th><th>Expires</th><th>Strap</th></tr></thead><tbody>"
        for c in codes {
            b += "<tr data-code=\"\(Self.escape(c.code))\" data-state=\"\(c.state)\"><td>\(Self.escape(c.code))</td><td>\(Self.escape(c.clientID))</td>"
            b += "<td>\(c.state)</td><td>\(Self.escape(c.expiresAt))</td><td>\(Self.escape(c.device ?? "–"))</td></tr>"
        }
        b += "</tbody></table></section>"
        b += "<form method=\"post\" action=\"/staff/logout\"><button type=\"submit\">Sign out</button></form>"
        return Self.document(title: "blegate staff", body: b)
    }

    private func loginPage(message: String?) -> String {
        var b = ""
        if let message { b += "<p class=\"problem\" role=\"alert\">\(Self.escape(message))</p>" }
        b += "<form method=\"post\" action=\"/staff/login\" id=\"login\"><label>Staff token "
        b += "<input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label> <button type=\"submit\">Sign in</button></form>"
        return Self.document(title: "blegate staff: sign in", body: b)
    }

    static func document(title: String, body: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title><style>
        body{font:15px/1.4 system-ui,sans-serif;margin:1.5rem;color:#111}table{border-collapse:collapse;margin:.5rem 0 1.5rem}
        th,td{border-bottom:1px solid #ddd;padding:.3rem .7rem;text-align:left}th{background:#f3f3f3}
        tr[data-health=offline] td:nth-child(2),tr[data-health=revoked] td:nth-child(2){color:#b00020;font-weight:600}
        tr[data-health=online] td:nth-child(2){color:#106b21;font-weight:600}.problem{color:#b00020}.new-code strong{font-size:1.4em}
        </style></head><body><h1>\(escape(title))</h1>\(body)</body></html>
        """
    }

    /// A client id as one path segment.
    static func percentEncoded(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            let c = Character(Unicode.Scalar(b))
            if c.isASCII && (c.isLetter || c.isNumber || "-._~".contains(c)) { out.append(c) }
            else { out += "%" + String(b, radix: 16, uppercase: true).leftPadded(2) }
        }
        return out
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    private func html(_ status: Int, _ text: String) -> Response {
        Response(status: .init(code: status), headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func redirect(_ location: String, cookie: String?) -> Response {
        var headers: HTTPFields = [.location: location, .cacheControl: "no-store"]
        if let cookie { headers[.setCookie] = cookie }
        return Response(status: .seeOther, headers: headers)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
