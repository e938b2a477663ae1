// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import BlegateServer
import BlegateTestSupport
import Foundation
import NIOHTTP1
import Testing

/// A path the server serves, asked with a method it does not take: 405 with `Allow`
/// (RFC 9110), as the contract says; a path it does not serve: 404.
@Suite("blegate-server: methods a path does not take")
struct MethodTests {
    @Test("405 with Allow for TRACE, DELETE and a wrong verb; 404 for an unknown path")
    func methodNotAllowed() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gym-methods")
        for (method, path, allow) in [(HTTPMethod.TRACE, "/api/v1/gateways", "GET"), (.DELETE, "/api/v1/metrics", "POST"),
                                      (.GET, "/api/v1/workouts", "POST, PUT"), (.POST, "/healthz", "GET"),
                                      (.DELETE, "/api/v1/members/m-1", "GET, PUT")] {
            let answer = try await Self.ask(method, h.baseURL + path, token: token)
            #expect(answer.status == 405, "\(method) \(path): \(answer.status) \(answer.body)")
            #expect(answer.headers.first(name: "Allow") == allow, "\(method) \(path): \(answer.headers)")
        }
        #expect(try await Self.ask(.TRACE, h.baseURL + "/api/v1/nothing", token: token).status == 404)
        // A key the server does not store may hold anything, NUL too: the code is judged.
        let pair = try await h.send("/api/v1/pair", "{\"code\":\"NOPE\",\"device\":{\"address\":\"A0:9E:1A:00:00:01\",\"x\\u0000\":1}}",
                                    token: token)
        #expect(pair.status == 404, "\(pair.status) \(pair.body)")
    }

    /// A request without a body (TRACE may carry none).
    static func ask(_ method: HTTPMethod, _ url: String, token: String) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        return try await ServerHarness.fetch(request, limit: 1 << 20)
    }
}
