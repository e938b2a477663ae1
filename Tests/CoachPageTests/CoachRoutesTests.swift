// SPDX-License-Identifier: MIT
@testable import CoachPage
import Synchronization
import Testing
import Wall

/// A coach's actions recorded, with a state the page would draw.
final class RecordingActions: CoachActions {
    let done = Mutex<[String]>([])

    func state() async -> CoachState {
        CoachState(room: "Spin studio", classTypes: ["cycle", "hiit"], running: nil,
                   straps: [.init(address: "C4:A4:00:00:00:01", name: "Polar H10 01", state: "waiting-for-link", reason: "hci0 is full (4 of 4)")],
                   members: [.init(clientID: "m-ana", name: "Ana")], membersSource: "server", summaryNumber: 0)
    }
    func startClass(name: String, type: String, plannedMinutes: Int?) async throws(CoachFailure) {
        done.withLock { $0.append("start \(name) \(type) \(plannedMinutes.map(String.init) ?? "-")") }
    }
    func stopClass() async throws(CoachFailure) { throw CoachFailure("no class is running", status: 409) }
    func assign(address: String, clientID: String) async throws(CoachFailure) { done.withLock { $0.append("assign \(address) \(clientID)") } }
    func pair(address: String, code: String) async throws(CoachFailure) { done.withLock { $0.append("pair \(address) \(code)") } }
    func unassign(address: String) async throws(CoachFailure) { done.withLock { $0.append("unassign \(address)") } }
    func saveProfile(clientID: String, _ profile: CoachProfile) async throws(CoachFailure) {
        done.withLock { $0.append("profile \(clientID) \(profile.age ?? 0) \(profile.maxHR ?? 0) \(profile.weightKg ?? 0)") }
    }
    func summaryHTML() async -> String? { nil }
}

final class TestClock: Sendable {
    let now = Mutex(1000.0)
    var seconds: @Sendable () -> Double { { self.now.withLock { $0 } } }
    func advance(_ s: Double) { now.withLock { $0 += s } }
}

@Suite struct CoachRoutesTests {
    let actions = RecordingActions()
    let clock = TestClock()
    var routes: CoachRoutes { CoachRoutes(guardian: guardian, actions: actions) }
    let guardian: CoachGuard

    init() { guardian = CoachGuard(pin: "482913", clock: clock.seconds) }

    func signIn(_ pin: String, from address: String = "192.168.1.20", origin: String? = "http://gw.local:8080") async -> WallResponse {
        var headers: [(name: String, value: String)] = [("Host", "gw.local:8080"), ("Content-Type", "application/x-www-form-urlencoded")]
        if let origin { headers.append(("Origin", origin)) }
        return await routes.respond(WallRequest(method: "POST", path: "/coach/signin", headers: headers, body: Array("pin=\(pin)".utf8),
                                                remoteAddress: address))
    }

    func cookie(_ r: WallResponse) -> String? {
        r.headers.first { $0.name == "Set-Cookie" }.map { String($0.value.prefix { $0 != ";" }) }
    }

    func csrf(_ cookie: String) async -> String {
        let page = await routes.respond(WallRequest(method: "GET", path: "/coach", headers: [("Cookie", cookie)]))
        let html = String(decoding: page.body, as: UTF8.self)
        return String(html.split(separator: "name=\"csrf\" content=\"")[1].prefix { $0 != "\"" })
    }

    func post(_ path: String, _ json: String, cookie: String?, csrf: String?, origin: String? = "http://gw.local:8080") async -> WallResponse {
        var headers: [(name: String, value: String)] = [("Host", "gw.local:8080"), ("Content-Type", "application/json")]
        if let cookie { headers.append(("Cookie", cookie)) }
        if let csrf { headers.append(("X-CSRF-Token", csrf)) }
        if let origin { headers.append(("Origin", origin)) }
        return await routes.respond(WallRequest(method: "POST", path: path, headers: headers, body: Array(json.utf8)))
    }

    @Test func withoutASessionThePageIsTheSignInForm() async {
        let r = await routes.respond(WallRequest(method: "GET", path: "/coach"))
        let html = String(decoding: r.body, as: UTF8.self)
        #expect(r.status == 200)
        #expect(html.contains("data-testid=\"coach-pin\"") && html.contains("data-testid=\"coach-signin\""))
        #expect(!html.contains("class-start"))
        let state = await routes.respond(WallRequest(method: "GET", path: "/coach/api/state"))
        #expect(state.status == 401)
    }

    @Test func theRightPINOpensASessionInAStrictHttpOnlyCookie() async throws {
        let r = await signIn("482913")
        #expect(r.status == 303)
        let setCookie = try #require(r.headers.first { $0.name == "Set-Cookie" }?.value)
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/coach"))
        let c = try #require(cookie(r))
        let page = await routes.respond(WallRequest(method: "GET", path: "/coach", headers: [("Cookie", c)]))
        #expect(String(decoding: page.body, as: UTF8.self).contains("data-testid=\"class-start\""))
        let state = await routes.respond(WallRequest(method: "GET", path: "/coach/api/state", headers: [("Cookie", c)]))
        #expect(state.status == 200)
        #expect(String(decoding: state.body, as: UTF8.self).contains("hci0 is full"))
    }

    @Test func aWrongPINIsRefusedAndGuessingSlowsDown() async {
        #expect(await signIn("000000").status == 401)
        #expect(await signIn("000001").status == 401)
        #expect(await signIn("000002").status == 401)
        // The fourth try must wait, even with the right PIN: it is not checked.
        let waited = await signIn("482913")
        #expect(waited.status == 429)
        #expect(waited.headers.contains { $0.name == "Retry-After" })
        // Another address is not held up by this one.
        #expect(await signIn("482913", from: "192.168.1.21").status == 303)
        clock.advance(1.1)
        #expect(await signIn("000003").status == 401)
        // Now two seconds.
        clock.advance(1.1)
        #expect(await signIn("482913").status == 429)
        clock.advance(1.0)
        #expect(await signIn("482913").status == 303)
    }

    @Test func manyAddressesTogetherAreSlowedDownToo() async {
        for i in 0..<CoachGuard.globalFailures {
            #expect(await signIn("999999", from: "10.0.\(i / 250).\(i % 250)").status == 401)
        }
        #expect(await signIn("482913", from: "10.9.9.9").status == 429)
        clock.advance(CoachGuard.globalWindow + 1)
        #expect(await signIn("482913", from: "10.9.9.9").status == 303)
    }

    @Test func aSignInPostedFromAnotherSiteIsRefused() async {
        #expect(await signIn("482913", origin: "http://evil.example").status == 403)
    }

    @Test func changesNeedTheSessionsTokenAndThisOrigin() async throws {
        let c = try #require(cookie(await signIn("482913")))
        let token = await csrf(c)
        let body = #"{"name":"Spin 18:00","type":"cycle","minutes":45}"#
        // A forged cross-site POST: the cookie rides along, the token cannot.
        #expect(await post("/coach/api/class/start", body, cookie: c, csrf: nil).status == 403)
        let wrong = (token.first == "0" ? "1" : "0") + token.dropFirst()
        #expect(await post("/coach/api/class/start", body, cookie: c, csrf: wrong).status == 403)
        #expect(await post("/coach/api/class/start", body, cookie: c, csrf: token, origin: "http://evil.example").status == 403)
        #expect(await post("/coach/api/class/start", body, cookie: nil, csrf: token).status == 401)
        #expect(actions.done.withLock { $0 }.isEmpty)
        #expect(await post("/coach/api/class/start", body, cookie: c, csrf: token).status == 200)
        #expect(actions.done.withLock { $0 } == ["start Spin 18:00 cycle 45"])
    }

    @Test func actionsReachTheGatewayAndFailuresSayWhy() async throws {
        let c = try #require(cookie(await signIn("482913")))
        let token = await csrf(c)
        #expect(await post("/coach/api/straps/assign", #"{"address":"C4:A4:00:00:00:01","client_id":"m-ana"}"#, cookie: c, csrf: token).status == 200)
        #expect(await post("/coach/api/straps/assign", #"{"address":"C4:A4:00:00:00:02","code":" ab12cd "}"#, cookie: c, csrf: token).status == 200)
        #expect(await post("/coach/api/straps/unassign", #"{"address":"C4:A4:00:00:00:01"}"#, cookie: c, csrf: token).status == 200)
        #expect(await post("/coach/api/members/profile", #"{"client_id":"m-ana","age":34,"max_hr":188,"weight_kg":61.5}"#,
                           cookie: c, csrf: token).status == 200)
        let bad = await post("/coach/api/members/profile", #"{"client_id":"m-ana","age":400}"#, cookie: c, csrf: token)
        #expect(bad.status == 400)
        #expect(String(decoding: bad.body, as: UTF8.self).contains("age"))
        let stop = await post("/coach/api/class/stop", "{}", cookie: c, csrf: token)
        #expect(stop.status == 409)
        #expect(String(decoding: stop.body, as: UTF8.self).contains("no class is running"))
        #expect(actions.done.withLock { $0 } == ["assign C4:A4:00:00:00:01 m-ana", "pair C4:A4:00:00:00:02 ab12cd",
                                                 "unassign C4:A4:00:00:00:01", "profile m-ana 34 188 61.5"])
    }

    @Test func signingOutEndsTheSession() async throws {
        let c = try #require(cookie(await signIn("482913")))
        let token = await csrf(c)
        #expect(await post("/coach/signout", "", cookie: c, csrf: token).status == 200)
        let state = await routes.respond(WallRequest(method: "GET", path: "/coach/api/state", headers: [("Cookie", c)]))
        #expect(state.status == 401)
    }

    @Test func pinsCompareWhole() {
        #expect(CoachGuard.same(Array("1234".utf8), Array("1234".utf8)))
        #expect(!CoachGuard.same(Array("1234".utf8), Array("12345".utf8)))
        #expect(!CoachGuard.same(Array("".utf8), Array("1234".utf8)))
        #expect(CoachGuard.delay(failures: 2) == 0 && CoachGuard.delay(failures: 3) == 1 && CoachGuard.delay(failures: 30) == CoachGuard.maximumDelay)
    }
}
