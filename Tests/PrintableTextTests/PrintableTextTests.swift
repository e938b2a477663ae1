// SPDX-License-Identifier: MIT
import PrintableText
import Testing

@Suite struct PrintableTextTests {
    @Test func escapeSequencesAndOverridesAreNeutralised() {
        let hostile = "Polar\u{1B}]0;pwned\u{07}\u{1B}[2J H10\u{202E}gnp.exe\u{9B}31m\u{7F}"
        let clean = PrintableText.clean(hostile, limit: 64)
        #expect(!clean.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x202E })
        #expect(clean.hasPrefix("Polar\u{FFFD}]0;pwned\u{FFFD}\u{FFFD}[2J H10\u{FFFD}"))
        #expect(!PrintableText.isClean(hostile, limit: 64))
    }

    @Test func namesKeepTheirLettersAndAreCapped() {
        #expect(PrintableText.isClean("Polar H10 8C4A2B1F", limit: 64))
        #expect(PrintableText.clean("Zoë’s HRM ♥", limit: 64) == "Zoë’s HRM ♥")
        let long = String(repeating: "x", count: 300)
        #expect(PrintableText.clean(long, limit: 64) == String(repeating: "x", count: 64) + "…")
    }

    @Test func credentialsAndTokensAreRedacted() {
        #expect(PrintableText.redactingCredentials("https://gym:s3cret@backend.example:8443/api?x=1") == "https://***@backend.example:8443/api?x=1")
        #expect(PrintableText.redactingCredentials("https://backend.example/a@b") == "https://backend.example/a@b")
        #expect(PrintableText.redacting("tok-12345", in: "bad header: Bearer tok-12345 (tok-12345)") == "bad header: Bearer <token> (<token>)")
        #expect(PrintableText.redacting(nil, in: "x") == "x")
    }
}
