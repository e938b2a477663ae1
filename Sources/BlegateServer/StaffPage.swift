// SPDX-License-Identifier: MIT
import BackendContract
import ClassSummary
import Effort
import PrintableText
import Hummingbird
import NIOCore

/// `/staff`: server-rendered pages for the gym's staff: members (with a form to add one),
/// pairing codes, gateways and their health, the last classes; a page per member (profile
/// form, workouts) and per class (everyone's heart-rate curve and time in zones).
/// Plain HTML forms, no script: it works in any browser, and the staff token travels in
/// an HttpOnly, SameSite=Strict cookie, which also keeps other sites from posting the form.
struct StaffPage {
    let store: ServerStore
    let time: LocalTime
    /// This instance's figures, as `/metrics` exports them (the Server panel).
    var metrics: ServerMetrics?

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
        case (.post, "/staff/members"):
            guard let token = Self.cookieToken(request), try await store.staff(token: token) != nil else {
                return html(401, loginPage(message: "Sign in first."))
            }
            let form = try await formFields(&request)
            do {
                var changes = MemberChanges()
                for field in ["age", "max_hr", "resting_hr", "weight_kg", "sex"] {
                    if let v = form[field], !v.isEmpty { try changes.set(field, text: v) }
                }
                let id = form["client_id"].flatMap { $0.isEmpty ? nil : $0 }
                let member = try await store.addMember(name: form["name"] ?? "", clientID: id, changes: changes)
                return redirect("/staff/members/\(Self.percentEncoded(member.clientID))?added=1", cookie: nil)
            } catch let problem as MemberProblem {
                return html(400, try await page(newCode: nil, problem: problem.description))
            } catch let refused as ServerStore.AdminError {
                return html(400, try await page(newCode: nil, problem: refused.description))
            }
        case (_, _) where path.hasPrefix("/staff/members/"):
            guard let token = Self.cookieToken(request), try await store.staff(token: token) != nil else {
                return html(401, loginPage(message: "Sign in first."))
            }
            let segment = path.dropFirst("/staff/members/".count)
            guard !segment.contains("/"), let id = String(segment).removingPercentEncoding, !id.isEmpty, !id.contains("\u{0}") else {
                return html(404, Self.document(title: "No such page", body: "<p><a href=\"/staff\">Back to the staff page</a></p>"))
            }
            if request.method == .post {
                let form = try await formFields(&request)
                do {
                    var changes = MemberChanges()
                    for field in MemberChanges.fields {
                        if let v = form[field] { try changes.set(field, text: v) }
                    }
                    guard try await store.updateMember(id, changes) != nil else { return try await memberPage(id, status: 404) }
                    return redirect("/staff/members/\(Self.percentEncoded(id))?saved=1", cookie: nil)
                } catch let problem as MemberProblem {
                    return try await memberPage(id, status: 400, problem: problem.description)
                }
            }
            guard request.method == .get else { return html(405, "<p>Use GET or POST.</p>") }
            let note = request.uri.queryParameters["saved"] != nil ? "Profile saved."
                : request.uri.queryParameters["added"] != nil ? "Member added." : nil
            return try await memberPage(id, status: 200, note: note)
        case (.get, _) where path.hasPrefix("/staff/classes/"):
            guard let token = Self.cookieToken(request), try await store.staff(token: token) != nil else {
                return html(401, loginPage(message: "Sign in first."))
            }
            return try await classPage(String(path.dropFirst("/staff/classes/".count)))
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
        // Right after making a code, the primary: a lagging replica may not hold it yet.
        let store = newCode == nil ? self.store : self.store.primary
        let members = try await store.members()
        let activity = try await store.workoutActivity()
        let codes = try await store.pairingCodes()
        let gateways = try await store.gateways()
        let classes = try await store.lastClasses()
        var b = "<nav><a href=\"#classes\">Classes</a> · <a href=\"#members\">Members</a> · <a href=\"#pairing\">Pairing codes</a></nav>"
        if let problem { b += "<p class=\"problem\" role=\"alert\">\(Self.escape(problem))</p>" }
        if let newCode, let made = codes.first(where: { $0.code == newCode }) {
            b += "<p class=\"new-code\" data-new-code=\"\(Self.escape(made.code))\">New pairing code for \(Self.escape(made.clientID)): "
            b += "<strong>\(Self.escape(made.code))</strong>, valid until \(Self.escape(made.expiresAt)).</p>"
        }
        if let metrics { b += Self.serverPanel(metrics.snapshot()) }
        b += "<section id=\"gateways\"><h2>Gateways</h2><table><thead><tr><th>Gateway</th><th>Health</th><th>Last contact</th>"
        b += "<th>Outbox</th><th>Version</th><th>Requests</th></tr></thead><tbody>"
        for g in gateways {
            let health = g.revoked ? "revoked" : g.secondsSinceContact.map { $0 <= Self.offlineSeconds ? "online" : "offline" } ?? "never seen"
            b += "<tr data-gateway=\"\(Self.escape(g.id))\" data-health=\"\(health)\"><td>\(Self.escape(g.id))</td><td>\(health)</td>"
            b += "<td>\(Self.escape(g.lastContact ?? "–"))</td><td>\(g.outboxDepth.map(String.init) ?? "–")</td>"
            b += "<td>\(Self.escape(g.version ?? "–"))</td><td>\(g.requests)</td></tr>"
        }
        b += "</tbody></table></section>"
        b += "<section id=\"classes\"><h2>Last classes</h2><table><thead><tr><th>Class</th><th>Started</th><th>People</th>"
        b += "<th>Average HR</th><th>Gateways</th></tr></thead><tbody>"
        for c in classes {
            let href = "/staff/classes/" + c.key
            b += "<tr data-class=\"\(Self.escape(c.className))\" data-key=\"\(Self.escape(c.key))\">"
            b += "<td><a href=\"\(Self.escape(href))\">\(Self.escape(c.className))</a></td><td data-field=\"start\">\(time.text(c.start))</td>"
            b += "<td data-field=\"members\">\(c.people)</td><td>\(Int(c.avgHR.rounded()))</td><td>\(Self.escape(c.gateways.joined(separator: ", ")))</td></tr>"
        }
        b += "</tbody></table></section>"
        b += "<section id=\"members\"><h2>Members</h2><table><thead><tr><th>Member</th><th>Client id</th><th>Profile</th>"
        b += "<th>Straps</th><th>Workouts</th><th>Last workout</th><th>Export</th></tr></thead><tbody>"
        for m in members {
            let (workouts, last) = activity[m.clientID].map { ($0.workouts, Optional($0.last)) } ?? (0, nil)
            let page = "/staff/members/\(Self.percentEncoded(m.clientID))"
            b += "<tr data-member=\"\(Self.escape(m.clientID))\"><td data-field=\"name\"><a href=\"\(Self.escape(page))\">\(Self.escape(m.name))</a></td>"
            b += "<td>\(Self.escape(m.clientID))</td><td data-field=\"profile\">\(Self.escape(Self.profileText(m)))</td>"
            b += "<td data-field=\"straps\">\(Self.escape(m.straps.joined(separator: ", ")))</td><td data-field=\"workouts\">\(workouts)</td>"
            b += "<td>\(last.map { time.text($0) } ?? "–")</td>"
            b += "<td>\(workouts > 0 ? "<a href=\"\(Self.escape(page + "/workouts.csv"))\" data-csv>workouts.csv</a>" : "")</td></tr>"
        }
        b += "</tbody></table>"
        b += "<form method=\"post\" action=\"/staff/members\" id=\"add-member\"><h3>Add a member</h3>"
        b += Self.profileFields(nil, clientIDField: true)
        b += "<button type=\"submit\">Add member</button></form></section>"
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

    /// The Server panel: this instance's database probe and counts since it started, the
    /// figures `/metrics` exports (`ServerMetrics`); each gateway's last contact and outbox
    /// are in the Gateways table, from the same rows the metrics read.
    static func serverPanel(_ m: ServerMetrics.Snapshot) -> String {
        let database = m.databaseUp.map { $0 ? "up" : "down" } ?? "not probed yet"
        let probe = m.probeSeconds.map { " (probe \(Int(($0 * 1000).rounded())) ms)" } ?? ""
        func count(_ tally: [ServerMetrics.Outcome: Int], _ kind: String) -> String {
            ServerMetrics.Outcome.allCases.map { o in
                "<span data-field=\"\(kind)-\(o.rawValue)\">\(tally[o] ?? 0)</span> \(o.rawValue)"
            }.joined(separator: ", ")
        }
        var b = "<section id=\"server\"><h2>Server</h2><p>This instance since it started. "
        b += "Database <strong data-field=\"database\">\(database)</strong>\(probe); "
        b += "<span data-field=\"connections\">\(m.connectionsInUse)</span> connections in use; "
        b += "<span data-field=\"requests\">\(m.requests)</span> requests.</p>"
        b += "<p>Records: \(count(m.records, "records")).</p><p>Workouts: \(count(m.workouts, "workouts")).</p></section>"
        return b
    }

    /// "34 y, max 188, resting 52, 61.5 kg, female"; "no profile" when nothing is known.
    static func profileText(_ m: Member) -> String {
        var parts: [String] = []
        if let a = m.age { parts.append("\(a) y") }
        if let x = m.maxHR { parts.append("max \(x)") }
        if let r = m.restingHR { parts.append("resting \(r)") }
        if let w = m.weightKg { parts.append("\(MemberChanges.shown(w)) kg") }
        if let s = m.sex { parts.append(s) }
        return parts.isEmpty ? "no profile" : parts.joined(separator: ", ")
    }

    /// The name and profile inputs, filled from `m`; empty means unknown.
    static func profileFields(_ m: Member?, clientIDField: Bool) -> String {
        func input(_ name: String, _ label: String, _ value: String?, _ extra: String) -> String {
            "<label>\(label) <input name=\"\(name)\" value=\"\(escape(value ?? ""))\" \(extra)></label> "
        }
        var b = input("name", "Name", m?.name, "required maxlength=\"80\"")
        if clientIDField { b += input("client_id", "Client id (optional)", nil, "size=\"14\"") }
        b += input("age", "Age", m?.age.map(String.init), "inputmode=\"numeric\" size=\"4\"")
        b += input("max_hr", "Max HR", m?.maxHR.map(String.init), "inputmode=\"numeric\" size=\"4\"")
        b += input("resting_hr", "Resting HR", m?.restingHR.map(String.init), "inputmode=\"numeric\" size=\"4\"")
        b += input("weight_kg", "Weight (kg)", m?.weightKg.map(MemberChanges.shown), "inputmode=\"decimal\" size=\"5\"")
        b += "<label>Sex <select name=\"sex\">"
        for (value, label) in [("", "unknown"), ("female", "female"), ("male", "male")] {
            b += "<option value=\"\(value)\"\((m?.sex ?? "") == value ? " selected" : "")>\(label)</option>"
        }
        return b + "</select></label> "
    }

    /// `/staff/members/{client_id}`: the profile form and the member's workouts.
    private func memberPage(_ id: String, status: Int, problem: String? = nil, note: String? = nil) async throws -> Response {
        // A page after a save or an add reads the primary, which holds what was just written.
        let store = note == nil ? self.store : self.store.primary
        guard let m = try await store.member(id) else {
            return html(404, Self.document(title: "No member \(id)", body: "<p><a href=\"/staff\">Back to the staff page</a></p>"))
        }
        let workouts = try await store.memberWorkouts(clientID: id)
        let page = "/staff/members/\(Self.percentEncoded(id))"
        var b = "<nav><a href=\"/staff\">Staff page</a></nav>"
        if let problem { b += "<p class=\"problem\" role=\"alert\">\(Self.escape(problem))</p>" }
        if let note { b += "<p class=\"note\" role=\"status\">\(Self.escape(note))</p>" }
        b += "<section id=\"profile\" data-member=\"\(Self.escape(m.clientID))\"><p>Client id <code>\(Self.escape(m.clientID))</code>; "
        b += "straps: <span data-field=\"straps\">\(Self.escape(m.straps.isEmpty ? "none" : m.straps.joined(separator: ", ")))</span>; "
        b += "profile: <span data-field=\"profile\">\(Self.escape(Self.profileText(m)))</span></p>"
        b += "<form method=\"post\" action=\"\(Self.escape(page))\" id=\"profile-form\">"
        b += Self.profileFields(m, clientIDField: false) + "<button type=\"submit\">Save profile</button></form></section>"
        b += "<section id=\"workouts\"><h2>Workouts</h2>"
        if !workouts.isEmpty { b += "<p><a href=\"\(Self.escape(page + "/workouts.csv"))\" data-csv>workouts.csv</a></p>" }
        b += "<table><thead><tr><th>Date</th><th>Class</th><th>Duration</th><th>Avg HR</th><th>Points</th><th>kcal</th></tr></thead><tbody>"
        for (start, hour, w) in workouts {
            let name = w["class_name"]?.string
            let cls = name.map { "<a href=\"/staff/classes/\(Self.escape("\(hour)-" + Self.percentEncoded($0)))\">\(Self.escape($0))</a>" } ?? "open gym"
            b += "<tr data-workout><td>\(time.text(start))</td><td>\(cls)</td>"
            b += "<td>\(SummaryTime.text(seconds: Int(w["duration_seconds"]?.number ?? 0)))</td>"
            b += "<td>\(Self.whole(w["avg_heart_rate"]?.number))</td><td data-field=\"points\">\(Self.whole(w["effort_points"]?.number))</td>"
            b += "<td data-field=\"kcal\">\(Self.whole(w["calories_active"]?.number))</td></tr>"
        }
        b += "</tbody></table></section>"
        return html(status, Self.document(title: m.name, body: b))
    }

    static func whole(_ n: Double?) -> String { n.map { String(Int($0.rounded())) } ?? "–" }

    /// `/staff/classes/{hour}-{name}`: per person the heart-rate curve over the class, from
    /// the server's records of their strap, time in zones 1 to 5, points and kcal.
    private func classPage(_ key: String) async throws -> Response {
        let parts = key.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, let hour = Int64(parts[0]), let name = String(parts[1]).removingPercentEncoding, !name.contains("\u{0}") else {
            return html(404, Self.document(title: "No such class", body: "<p><a href=\"/staff\">Back to the staff page</a></p>"))
        }
        let found = try await store.classPeople(name: name, hour: hour)
        guard let start = found.map(\.start).min(), let end = found.map(\.end).max() else {
            return html(404, Self.document(title: "No such class", body: "<p><a href=\"/staff\">Back to the staff page</a></p>"))
        }
        let members = Dictionary(try await store.members().map { ($0.clientID, $0) }, uniquingKeysWith: { a, _ in a })
        func label(_ p: ServerStore.ClassPerson) -> String {
            p.clientID.map { members[$0]?.name ?? $0 } ?? p.devices.joined(separator: ", ")
        }
        // By name, as the members list; straps nobody wore (named by address) after them.
        let people = found.sorted { a, b in
            let (x, y) = (a.clientID == nil ? 1 : 0, b.clientID == nil ? 1 : 0)
            return x != y ? x < y : label(a).lowercased() < label(b).lowercased()
        }
        let rates = try await store.heartRates(devices: Array(Set(people.flatMap(\.devices))), from: start, to: end)
        var b = "<nav><a href=\"/staff\">Staff page</a></nav>"
        b += "<section id=\"class\" data-class=\"\(Self.escape(name))\"><p>Started <span data-field=\"start\">\(time.text(start))</span>, "
        b += "\(SummaryTime.text(seconds: Int(end - start))) long; <span data-field=\"members\">\(people.count)</span> "
        b += people.count == 1 ? "person.</p>" : "people.</p>"
        for p in people {
            let m = p.clientID.flatMap { members[$0] }
            let profile = MemberProfile(age: m?.age, maxHR: m?.maxHR, restingHR: m?.restingHR)
            let maxHR = Double(MaxHeartRate.of(profile)?.bpm ?? 185)
            let samples = p.devices.flatMap { rates[$0] ?? [] }.sorted { $0.time < $1.time }
                .map { HeartRateCurve.Sample(second: $0.time - start, bpm: $0.hr) }
            let curve = HeartRateCurve(durationSeconds: end - start, maxHR: maxHR, restingHR: m?.restingHR.map(Double.init))
            let zones = p.workout["seconds_in_zone"]?.array?.compactMap(\.number) ?? []
            b += "<section class=\"summary-member\" data-testid=\"summary-member\" data-member=\"\(Self.escape(p.clientID ?? p.devices.first ?? ""))\">"
            b += "<h3>\(Self.escape(label(p)))</h3><div class=\"curve\" data-samples=\"\(samples.count)\">\(curve.svg(samples))</div>"
            b += "<table><thead><tr>"
            for z in 1...5 { b += "<th>Zone \(z)</th>" }
            b += "<th>Points</th><th>kcal</th></tr></thead><tbody><tr>"
            for z in 1...5 {
                let seconds = z < zones.count ? Int(zones[z]) : 0
                b += "<td data-zone=\"\(z)\" style=\"color:\(HeartRateCurve.zoneColours[z])\">\(SummaryTime.text(seconds: seconds))</td>"
            }
            b += "<td data-field=\"points\">\(Self.whole(p.workout["effort_points"]?.number))</td>"
            b += "<td data-field=\"kcal\">\(Self.whole(p.workout["calories_active"]?.number))</td></tr></tbody></table></section>"
        }
        b += "</section>"
        return html(200, Self.document(title: name, body: b))
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
        form label{margin-right:.6rem}.summary-member{display:inline-block;vertical-align:top;margin:0 1rem 1rem 0}
        .curve svg{width:320px;height:90px;background:#fafafa;border:1px solid #eee}
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

    static func escape(_ s: String) -> String { PrintableText.html(s) }

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
