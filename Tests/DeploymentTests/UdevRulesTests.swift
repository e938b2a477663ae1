// SPDX-License-Identifier: MIT
import Testing

/// Debian 12's udevadm (252) has no `verify` (it came in 254), so the rules are read
/// by a parser that knows udev's keys and operators; `udevadm verify` runs too where
/// the installed systemd has it.
@Suite("udev rules")
struct UdevRulesTests {
    static let path = Support.projectRoot + "/udev/70-blegate.rules"

    struct Problem: CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    /// Keys that only match, keys that only assign, keys that do both; `{attr}` marks
    /// keys that take an attribute name.
    static let matchOnly: Set<String> = ["ACTION", "DEVPATH", "KERNEL", "KERNELS", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER", "DRIVERS",
                                         "ATTRS{}", "TAGS", "TEST", "TEST{}", "PROGRAM", "RESULT", "CONST{}", "SYSCTL{}"]
    static let assignOnly: Set<String> = ["OPTIONS", "OWNER", "GROUP", "MODE", "RUN", "RUN{}", "LABEL", "GOTO", "SECLABEL{}", "IMPORT{}"]
    static let both: Set<String> = ["NAME", "SYMLINK", "ENV{}", "ATTR{}", "TAG"]
    static let matchOperators = ["==", "!="]
    static let assignOperators = ["+=", "-=", ":=", "="]

    /// Every problem in a rules text: unknown keys, wrong operators, unquoted values,
    /// and rules without a comment above them.
    static func problems(in text: String) -> [Problem] {
        var problems: [Problem] = []
        var previousWasComment = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = String(raw).trimmingWhitespace()
            if line.isEmpty { previousWasComment = false; continue }
            if line.hasPrefix("#") { previousWasComment = true; continue }
            if !previousWasComment { problems.append(Problem(line: number, message: "a rule without a comment above it saying why")) }
            previousWasComment = false
            if line.hasSuffix("\\") { problems.append(Problem(line: number, message: "continuation lines are not used here")); continue }
            var matches = 0
            for pair in splitPairs(line) {
                guard let (key, op, value) = parsePair(pair) else {
                    problems.append(Problem(line: number, message: "not KEY OP \"value\": \(pair)"))
                    continue
                }
                let keyClass = key.contains("{") ? String(key.prefix { $0 != "{" }) + "{}" : key
                if key.contains("{") && !key.hasSuffix("}") { problems.append(Problem(line: number, message: "unclosed {} in \(key)")) }
                let known = matchOnly.contains(keyClass) || assignOnly.contains(keyClass) || both.contains(keyClass)
                if !known { problems.append(Problem(line: number, message: "unknown key \(key)")); continue }
                if matchOperators.contains(op) {
                    if assignOnly.contains(keyClass) { problems.append(Problem(line: number, message: "\(key) cannot be matched")) }
                    matches += 1
                } else if matchOnly.contains(keyClass) {
                    problems.append(Problem(line: number, message: "\(key) cannot be assigned (\(op))"))
                }
                if value.contains("\"") { problems.append(Problem(line: number, message: "stray quote in \(pair)")) }
            }
            if matches == 0 { problems.append(Problem(line: number, message: "a rule that matches nothing applies to every event")) }
        }
        return problems
    }

    /// Splits at commas outside quotes.
    static func splitPairs(_ line: String) -> [String] {
        var pairs: [String] = []
        var current = ""
        var quoted = false
        for c in line {
            if c == "\"" { quoted.toggle() }
            if c == "," && !quoted { pairs.append(current.trimmingWhitespace()); current = ""; continue }
            current.append(c)
        }
        if !current.trimmingWhitespace().isEmpty || !pairs.isEmpty { pairs.append(current.trimmingWhitespace()) }
        return pairs
    }

    static func parsePair(_ pair: String) -> (String, String, String)? {
        let chars = Array(pair)
        var i = 0
        while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" || chars[i] == "{" || chars[i] == "}" || (chars[i] != "=" && chars[i] != "!" && chars[i] != "+" && chars[i] != "-" && chars[i] != ":" && chars[i] != " " && i > 0 && chars[..<i].contains("{") && !chars[..<i].contains("}")) {
            i += 1
        }
        let key = String(chars[..<i])
        guard !key.isEmpty else { return nil }
        var rest = String(chars[i...]).trimmingWhitespace()
        guard let op = (matchOperators + assignOperators).first(where: { rest.hasPrefix($0) }) else { return nil }
        rest = String(rest.dropFirst(op.count)).trimmingWhitespace()
        guard rest.count >= 2, rest.hasPrefix("\""), rest.hasSuffix("\"") else { return nil }
        return (key, op, String(rest.dropFirst().dropLast()))
    }

    @Test("every line of udev/70-blegate.rules is a comment, blank, or a valid rule with a comment above it")
    func rulesParse() throws {
        let text = try #require(Support.read(Self.path))
        let problems = Self.problems(in: text)
        #expect(problems.isEmpty, "\(problems)")
        let rules = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !String($0).trimmingWhitespace().isEmpty }
        #expect(rules.count >= 2)
        #expect(rules.contains { $0.contains("TAG+=\"systemd\"") && $0.contains("ENV{SYSTEMD_WANTS}+=\"blegate.service\"") && $0.contains("SUBSYSTEM==\"bluetooth\"") })
        #expect(rules.contains { $0.contains("SUBSYSTEM==\"usb\"") && $0.contains("ATTR{power/control}=\"on\"") })
    }

    @Test("the parser catches what udev would reject or silently ignore")
    func parserCatchesMistakes() {
        let cases = [
            "# ok\nACTION==\"add\", SUBSYTEM==\"usb\", ATTR{power/control}=\"on\"": "unknown key SUBSYTEM",
            "# ok\nACTION=\"add\", ATTR{power/control}=\"on\"": "cannot be assigned",
            "ACTION==\"add\", ATTR{power/control}=\"on\"": "without a comment",
            "# ok\nACTION==\"add\", RUN==\"/bin/true\"": "cannot be matched",
            "# ok\nACTION==add": "not KEY OP",
            "# ok\nATTR{power/control}=\"on\"": "matches nothing",
            "# ok\nACTION==\"add\", ENV{X=\"1\"": "unclosed {}",
        ]
        for (text, expected) in cases {
            let found = Self.problems(in: text)
            #expect(found.contains { $0.message.contains(expected) }, "\(text) → \(found)")
        }
    }

    static let udevadmHasVerify: Bool = Support.hasTool("udevadm") && Support.shellSync("udevadm verify --help").status == 0

    @Test("udevadm verify accepts the rules",
          .enabled(if: udevadmHasVerify, "skipped: this udevadm has no `verify` (systemd < 254; the parser test above covers it)"))
    func udevadmVerify() async {
        let (out, status) = await Support.shell("udevadm verify " + Support.quote(Self.path))
        #expect(status == 0, "\(out)")
    }
}
