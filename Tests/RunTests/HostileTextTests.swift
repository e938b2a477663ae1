// SPDX-License-Identifier: MIT
import BlegateTestSupport
import BlegateRun
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A strap whose name and Device Information strings carry terminal escape sequences, C1
/// controls and bidirectional overrides, as anyone in radio range can make one: nothing of
/// them reaches `blegate status` (text and JSON), `blegate devices` or the journal.
@Suite("Hostile device texts in status, devices and the journal")
struct HostileTextTests {
    /// ESC [2J (clear the screen), OSC 0 (set the window title) ended by BEL, U+202E.
    static let name = "H10\u{1B}[2J\u{1B}]0;owned\u{07}\u{202E}exe"
    /// The same in the model number, and 0x9B (a one-byte CSI once read as Latin-1) in the
    /// firmware.
    static let model: [UInt8] = Array("H10".utf8) + [0x1B] + Array("[2J".utf8) + [0x1B] + Array("]0;owned".utf8) + [0x07, 0xE2, 0x80, 0xAE]
        + Array("exe".utf8)
    static let firmware: [UInt8] = Array("3.1".utf8) + [0x9B] + Array("31m".utf8)

    /// Control characters and overrides that must never be printed (U+FFFD stands in for them).
    static func unsafeScalars(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter { v in
            (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v) || v == 0x200E || v == 0x200F
                || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
        }
    }

    @Test("a hostile strap's name, model and firmware: printable everywhere they are shown", .timeLimit(.minutes(3)))
    func hostileStrap() async throws {
        try await withSimulator({ c in
            c.straps = 1
            c.seed = 5
            c.name = Self.name
            c.deviceInformation = [0x2A24: Self.model, 0x2A26: Self.firmware]
        }) { bus, _ in
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil)
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("] connected ", timeout: 90), "\(run.stdout)\n\(run.stderr)")
            // Device Information reaches the registry with the next write of what was learned.
            var report: StatusReport?
            let learned = await eventually(timeout: 60) {
                report = try? await f.status()
                return report?.devices.first?.model != nil && report?.devices.first?.firmware != nil
            }
            #expect(learned, "\(report?.json() ?? "no status")")
            let device = try #require(report?.devices.first)
            #expect(device.name == "H10\u{FFFD}[2J\u{FFFD}]0;owned\u{FFFD}\u{FFFD}exe")
            #expect(device.model == "H10\u{FFFD}[2J\u{FFFD}]0;owned\u{FFFD}\u{FFFD}exe")
            #expect(device.firmware == "3.1\u{FFFD}31m")

            let outputs = [
                ("status --json", await f.cli("status --json").out),
                ("status", await f.cli("status").out),
                ("devices", await f.cli("devices").out),
                ("devices --json", await f.cli("devices --json").out),
            ]
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 30) == 0)
            for (command, out) in outputs + [("the journal (stdout)", run.stdout), ("the journal (stderr)", run.stderr)] {
                #expect(Self.unsafeScalars(out).isEmpty, "\(command) printed \(Self.unsafeScalars(out)):\n\(out.suffix(2000))")
                // JSON's escapes would hide a control character from the check above.
                #expect(!out.contains("\\u001b") && !out.contains("\\u0007") && !out.contains("\\u009b"), "\(command): \(out.suffix(2000))")
            }
            #expect(outputs[2].1.contains("H10\u{FFFD}[2J"), "\(outputs[2].1)")
            let listed = try #require(try JSONSerialization.jsonObject(with: Data(outputs[3].1.utf8)) as? [[String: Any]],
                                      "devices --json: \(outputs[3].1)")
            #expect(listed.first?["firmware"] as? String == "3.1\u{FFFD}31m", "\(outputs[3].1)")
        }
    }
}
