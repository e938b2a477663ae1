// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The backend check: an empty batch (`{"gateway_id":...,"records":[]}`) to
/// `POST /api/v1/metrics`, which the contract answers 200 with all zeros, so it proves
/// reachability and the token without sending data.
public enum BackendProbe {
    public static let metricsPath = "/api/v1/metrics"

    public static func body(gatewayID: String) -> [UInt8] {
        // A string and an empty list: encoding cannot fail.
        Array((try? DoctorJSON.encoder.encode(EmptyBatch(gatewayID: gatewayID))) ?? Data())
    }

    private struct EmptyBatch: Encodable {
        var gatewayID: String
        var records: [String] = []

        enum CodingKeys: String, CodingKey { case gatewayID = "gateway_id", records }
    }

    /// `https://backend.example/` + `/api/v1/metrics`, without doubling the slash.
    public static func metricsURL(base: String) -> String {
        var b = base
        while b.hasSuffix("/") { b.removeLast() }
        return b + metricsPath
    }

    /// Only http and https URLs with a host.
    public static func validate(url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return "must start with https:// or http://, got \"\(url)\". Example: url = \"https://backend.example/\""
        }
        let rest = url.drop { $0 != "/" }.dropFirst(2)
        guard let host = rest.split(separator: "/").first, !host.isEmpty else {
            return "has no host, got \"\(url)\". Example: url = \"https://backend.example/\""
        }
        return nil
    }

    /// What an answer means. `status` nil: no answer (`error` says why).
    public static func check(url: String, status: Int?, body: String, error: String?) -> DoctorCheck {
        let name = "backend"
        let target = metricsURL(base: url)
        guard let status else {
            return .fail(name, "\(target) unreachable: \(error ?? "no answer")",
                         fix: "check the network and [backend] url (try: curl -sS -o /dev/null -w '%{http_code}' \(target))")
        }
        switch status {
        case 200:
            return .ok(name, "\(target) reachable, token accepted")
        case 401, 403:
            return .fail(name, "\(target) refused the token (HTTP \(status))",
                         fix: "put the token the backend issued for this gateway into [backend] token_file (mode 0600)")
        case 404:
            return .fail(name, "\(target) answered 404: this URL is not a blegate backend",
                         fix: "set [backend] url to the backend's base address (the part before /api/v1)")
        case 429, 503:
            return .warn(name, "\(target) is busy (HTTP \(status)); records wait in the cache and are sent later", fix: nil)
        default:
            let excerpt = String(body.prefix(200)).trimmed()
            return .fail(name, "\(target) answered HTTP \(status)" + (excerpt.isEmpty ? "" : ": \(excerpt)"),
                         fix: "check the backend's logs; the gateway retries, nothing is lost meanwhile")
        }
    }
}
