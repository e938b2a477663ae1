// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every check of one `blegate doctor` run, in the order they were made, and the two
/// ways to show them: lines for a person, one JSON object for a script.
public struct DoctorReport: Sendable {
    public var checks: [DoctorCheck]

    public init(_ checks: [DoctorCheck] = []) { self.checks = checks }

    public mutating func add(_ check: DoctorCheck) { checks.append(check) }
    public mutating func add(_ more: [DoctorCheck]) { checks.append(contentsOf: more) }

    public var hasFailures: Bool { checks.contains { $0.status == .fail } }

    public func count(_ status: CheckStatus) -> Int { checks.count { $0.status == status } }

    /// `ok    name: message`, then `      fix: ...` under anything that is not ok, and a
    /// closing count.
    public func text() -> String {
        var out = ""
        for check in checks {
            let status = check.status.rawValue
            out += status + String(repeating: " ", count: 6 - status.count) + check.name + ": " + check.message + "\n"
            if let fix = check.fix {
                out += "      fix: " + fix + "\n"
            }
        }
        out += "\(count(.ok)) ok, \(count(.warn)) warn, \(count(.fail)) fail\n"
        return out
    }

    /// `{"checks":[{"fix","message","name","status"}],"fail":n,"ok":n,"warn":n}`, one line,
    /// keys sorted; `fix` is null for a check that needs none.
    public func json() -> String {
        // Strings and counts: encoding cannot fail.
        String(decoding: (try? DoctorJSON.encoder.encode(Summary(self))) ?? Data("{}".utf8), as: UTF8.self)
    }

    private struct Summary: Encodable {
        var checks: [DoctorCheck]
        var ok: Int
        var warn: Int
        var fail: Int

        init(_ r: DoctorReport) {
            checks = r.checks
            ok = r.count(.ok)
            warn = r.count(.warn)
            fail = r.count(.fail)
        }
    }
}

extension DoctorCheck: Encodable {
    enum CodingKeys: String, CodingKey { case name, status, message, fix }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(status.rawValue, forKey: .status)
        try c.encode(message, forKey: .message)
        try c.encode(fix, forKey: .fix)
    }
}

/// The doctor's JSON writer: sorted keys, slashes as they are (paths and URLs in
/// messages stay readable).
enum DoctorJSON {
    static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }
}
