// SPDX-License-Identifier: MIT
import BlegateServer
import BlegateTestSupport
import Foundation
import Testing

/// schemathesis (PyPI, installed by scripts/setup.sh) sends requests generated from
/// docs/backend-openapi.yaml to a running blegate-server: no 5xx, no status the contract
/// does not document, no schema-valid request refused, 405 with `Allow` for a method a path
/// does not take, answers of the documented type and shape.
@Suite("schemathesis against blegate-server")
struct SchemathesisTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL.path
    static let schemathesis = root + "/.build/test-python/bin/schemathesis"
    static let checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
        + "positive_data_acceptance,unsupported_method"

    @Test("the contract's operations, generated input, a fixed seed: 0 failures", .timeLimit(.minutes(5)))
    func contract() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.schemathesis),
                     "no \(Self.schemathesis): BLEGATE_SETUP_TESTS=1 scripts/setup.sh installs it")
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        // The contract's examples name this gateway: their batches reach the database.
        let token = try await h.store.addGateway("gym-north-1")
        // schemathesis cannot gzip a body: the copy it reads leaves out the Content-Encoding
        // header, which the server does not require (bodies without it are taken as sent).
        let dir = try scratchDirectory()
        let contract = try String(contentsOfFile: Self.root + "/docs/backend-openapi.yaml", encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("components/parameters/ContentEncoding'") && !$0.contains("name: Content-Encoding, in: header") }
            .joined(separator: "\n")
        try contract.write(toFile: dir + "/contract.yaml", atomically: true, encoding: .utf8)
        let run = await shell("cd '\(dir)' && '\(Self.schemathesis)' run contract.yaml --url \(h.baseURL) "
            + "-H 'Authorization: Bearer \(token)' --checks \(Self.checks) --max-examples 50 --seed 1 --no-color 2>&1")
        let summary = run.out.components(separatedBy: "SUMMARY").last ?? run.out
        #expect(run.status == 0, "\(run.out.suffix(6000))")
        #expect(summary.contains("No issues found") || !summary.contains("❌"), "\(summary)")
        print("schemathesis:", summary.split(separator: "\n").filter { $0.contains("generated") || $0.contains("passed") || $0.contains("failures") }
            .joined(separator: " | "))
    }
}
