// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// POSTs the empty batch of `BackendProbe` with the bearer token, gzip as the contract
/// wants, and reads the status.
package enum DoctorBackend {
    package static func check(url: String, tokenFile: String, gatewayID: String, timeout: Int64) async -> [DoctorCheck] {
        let token: String
        do {
            token = try TokenFile.read(path: tokenFile)
        } catch {
            return [.fail("backend token", error.message, fix: error.fix)]
        }
        var checks: [DoctorCheck] = [.ok("backend token", "\(tokenFile) is private (mode 0600 or stricter)")]
        var request = HTTPClientRequest(url: BackendProbe.metricsURL(base: url))
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Content-Encoding", value: "gzip")
        request.body = .bytes(ByteBuffer(bytes: StoredGzip.encode(BackendProbe.body(gatewayID: gatewayID))))
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout))
            let body = try await response.body.collect(upTo: 64 * 1024)
            checks.append(BackendProbe.check(url: url, status: Int(response.status.code), body: String(buffer: body), error: nil))
        } catch {
            checks.append(BackendProbe.check(url: url, status: nil, body: "", error: describe(error)))
        }
        return checks
    }

    /// AsyncHTTPClient's and NIO's errors in words.
    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("connectTimeout") || text.contains("deadlineExceeded") { return "no answer in time (\(text))" }
        if text.contains("Connection refused") || text.contains("connectionRefused") { return "connection refused (\(text))" }
        return text
    }
}
