// SPDX-License-Identifier: MIT
import JSON

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

    /// `{"checks":[{"name","status","message","fix"}],"ok":n,"warn":n,"fail":n}`, one line.
    public func json() -> String {
        var out = "{\"checks\":["
        for (i, check) in checks.enumerated() {
            if i > 0 { out += "," }
            out += "{\"name\":" + JSONText.quoted(check.name)
            out += ",\"status\":" + JSONText.quoted(check.status.rawValue)
            out += ",\"message\":" + JSONText.quoted(check.message)
            out += ",\"fix\":" + (check.fix.map(JSONText.quoted) ?? "null") + "}"
        }
        out += "],\"ok\":\(count(.ok)),\"warn\":\(count(.warn)),\"fail\":\(count(.fail))}"
        return out
    }
}

/// JSON string literals without Foundation (the doctor must run where little works):
/// the record encoder's escaping, so both write strings the same way.
public enum JSONText {
    public static func quoted(_ s: String) -> String {
        var out = ""
        JSONValue.writeString(s, to: &out)
        return out
    }
}
