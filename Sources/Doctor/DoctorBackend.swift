// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Sync

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
        do {
            request.body = .bytes(try Gzip.compress(ByteBuffer(bytes: BackendProbe.body(gatewayID: gatewayID))))
        } catch {
            return checks + [.fail("backend", "could not gzip the probe: \(error)", fix: nil)]
        }
        // The same client set-up and TLS trust as `blegate run`'s, so the check sees what the gateway would.
        let client = BackendTransport.makeClient(connectTimeout: .seconds(timeout))
        do {
            let answer = try await BackendTransport.exchange(client, request, timeout: .seconds(timeout), answerLimit: 64 * 1024)
            checks.append(BackendProbe.check(url: url, status: answer.status, body: String(buffer: answer.body), error: nil))
        } catch {
            checks.append(BackendProbe.check(url: url, status: nil, body: "", error: describe(error)))
        }
        try? await client.shutdown()
        return checks
    }

    static func describe(_ error: BackendTransport.Failure) -> String {
        switch error {
        case .connectTimeout, .deadlineExceeded: "no answer in time (\(error))"
        default: "\(error)"
        }
    }
}
