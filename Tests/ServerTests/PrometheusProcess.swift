// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import BlegateTestSupport
import Foundation
import Testing

/// Debian's `prometheus`, started by a test on loopback with a scrape config of its own
/// and its data in a scratch directory, and asked through its HTTP API.
struct PrometheusProcess {
    static let binary = "/usr/bin/prometheus"

    let process: BackgroundProcess
    let port: Int
    let dir: String

    struct Sample {
        var labels: [String: String]
        var time: Double
        var value: Double
    }

    /// Scrapes each job's one target every `interval`; `rules` are loaded as rule files.
    static func start(jobs: [(name: String, target: String)], interval: String = "1s", rules: [String] = []) async throws -> PrometheusProcess {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "no \(binary): apt-get install prometheus (scripts/setup.sh)")
        let dir = try scratchDirectory()
        var config = "global:\n  scrape_interval: \(interval)\n  evaluation_interval: \(interval)\n"
        if !rules.isEmpty { config += "rule_files:\n" + rules.map { "  - '\($0)'\n" }.joined() }
        config += "scrape_configs:\n"
        for job in jobs {
            config += "  - job_name: '\(job.name)'\n    static_configs:\n      - targets: ['\(job.target)']\n"
        }
        try config.write(toFile: dir + "/prometheus.yml", atomically: true, encoding: .utf8)
        let port = try freeLoopbackPort()
        let process = try await BackgroundProcess.start(
            "'\(binary)' --config.file='\(dir)/prometheus.yml' --storage.tsdb.path='\(dir)/data' "
                + "--web.listen-address=127.0.0.1:\(port) --log.level=warn")
        let p = PrometheusProcess(process: process, port: port, dir: dir)
        let ready = await eventually(timeout: 60) { (try? await p.get("/-/ready"))?.status == 200 }
        guard ready else { throw TestSupportError("prometheus did not become ready: \(process.stderr.suffix(2000))") }
        return p
    }

    func stop() { process.signal(SIGKILL) }

    func get(_ path: String) async throws -> (status: Int, body: String) {
        let answer = try await ServerHarness.fetch(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), limit: 8 << 20, timeout: 10)
        return (answer.status, answer.body)
    }

    /// An instant query's vector.
    func query(_ expression: String) async throws -> [Sample] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: allowed) ?? expression
        let answer = try await get("/api/v1/query?query=" + encoded)
        guard answer.status == 200,
              let json = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
              let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]] else {
            throw TestSupportError("query \(expression): HTTP \(answer.status) \(answer.body.prefix(500))")
        }
        return result.compactMap { r in
            guard let value = r["value"] as? [Any], value.count == 2, let t = value[0] as? Double,
                  let v = (value[1] as? String).flatMap(Double.init) else { return nil }
            return Sample(labels: r["metric"] as? [String: String] ?? [:], time: t, value: v)
        }
    }

    /// The one value `expression` gives, nil when it gives none.
    func value(_ expression: String) async throws -> Double? {
        try await query(expression).first?.value
    }
}
