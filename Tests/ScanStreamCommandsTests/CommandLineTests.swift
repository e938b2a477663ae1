// SPDX-License-Identifier: MIT
import ArgumentParser
@testable import ScanStreamCommands
import Testing

@Suite("scan and stream command lines")
struct CommandLineTests {
    /// The message a person sees for `arguments`, nil when they parse and validate.
    static func problem<C: ParsableCommand>(_ command: C.Type, _ arguments: [String]) -> String? {
        do {
            _ = try command.parse(arguments)
            return nil
        } catch {
            return command.message(for: error)
        }
    }

    @Test("--name value, --name=value, flags; --device repeats in order, others keep the last")
    func forms() throws {
        let stream = try StreamCommand.parse(["--device", "A0:9E:1A:00:00:01", "--format=text", "--device=Polar H10*",
                                              "--duration", "5", "--duration", "7", "--notify", "start", "--max-per-adapter", "3"])
        #expect(stream.devices == ["A0:9E:1A:00:00:01", "Polar H10*"])
        #expect(stream.format == .text && stream.notify == .start && stream.duration == 7)
        #expect(stream.linkLimit == 3 && stream.gatherMilliseconds == 500 && stream.hrvWindow == 60 && stream.bus == "system")
        let scan = try ScanCommand.parse(["--json", "--all", "--adapter", "hci1", "--timeout", "3"])
        #expect(scan.json && scan.all && scan.adapter == "hci1" && scan.timeout == 3)
        let plain = try ScanCommand.parse([])
        #expect(!plain.json && !plain.all && plain.adapter == nil && plain.timeout == nil && plain.bus == "system")
    }

    @Test("stream and scan check their values, naming the option at fault")
    func validation() {
        #expect(Self.problem(StreamCommand.self, []) == "give at least one --device ADDRESS or NAME")
        #expect(Self.problem(StreamCommand.self, ["--device", "X"]) == nil)
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--format", "xml"])?.contains("--format") == true)
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--notify", "poll"])?.contains("--notify") == true)
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--interval", "0"]) == "--interval must be positive")
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--hrv-window", "5"]) == "--hrv-window must be at least 10 seconds")
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--duration", "0"]) == "--duration must be positive")
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--duration", "-2"])?.contains("--duration") == true)
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--gather-ms", "1001"]) == "--gather-ms must be between 0 and 1000")
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--max-per-adapter", "0"]) == "--max-links must be between 1 and 64")
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--max-links", "soon"])?.contains("--max-links") == true)
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--format", "text", "--notify", "start", "--interval", "5", "--gather-ms", "0"]) == nil)
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--bogus"])?.contains("--bogus") == true)
        #expect(Self.problem(StreamCommand.self, ["--device", "X", "--find-timeout", "0"]) == "--find-timeout must be between 1 and 3600 seconds")
        #expect(Self.problem(ScanCommand.self, []) == nil)
        #expect(Self.problem(ScanCommand.self, ["--timeout", "0"]) == "--timeout must be positive")
        #expect(Self.problem(ScanCommand.self, ["--timeout", "soon"])?.contains("--timeout") == true)
        #expect(Self.problem(ScanCommand.self, ["stray"])?.contains("stray") == true)
    }

    @Test("help lists every option of both commands")
    func help() {
        let stream = StreamCommand.helpMessage(columns: 200)
        for option in ["--device <ADDR|NAME>", "--format <FORMAT>", "--interval <S>", "--hrv-window <S>", "--adapter <hciN>",
                       "--notify <METHOD>", "--duration <S>", "--bus <BUS>", "--max-links <N>", "--max-per-adapter <N>", "--gather-ms <MS>", "--find-timeout <S>"] {
            #expect(stream.contains(option), "stream --help: \(option)")
        }
        let scan = ScanCommand.helpMessage(columns: 200)
        for option in ["--adapter <hciN>", "--timeout <S>", "--json", "--all", "--bus <BUS>"] {
            #expect(scan.contains(option), "scan --help: \(option)")
        }
        #expect(scan.contains("7 discovery refused"))
    }

    @Test("a --device that matched nothing is named with what the scan saw")
    func notFound() {
        let polar = (address: "A0:9E:1A:00:00:01", name: Optional("Polar H10 1234"))
        #expect(StreamCommand.unmatched(["Polar H10*", "a0:9e:1a:00:00:01", "Garmin*"], followed: [polar]) == ["Garmin*"])
        #expect(StreamCommand.unmatched(["Garmin*"], followed: []) == ["Garmin*"])
        let seen = [(address: "A0:9E:1A:00:00:01", name: Optional("Polar H10 1234"), heartRate: true),
                    (address: "C0:00:00:00:00:02", name: nil, heartRate: false)]
        #expect(StreamCommand.notFound(["Garmin*"], seconds: 10, seen: seen)
            == "no device matching \"Garmin*\" found in 10 s of scanning; seen: Polar H10 1234 (A0:9E:1A:00:00:01) [heart rate], C0:00:00:00:00:02 (blegate scan --all lists what is in range)")
        let many = (0..<12).map { (address: "C0:00:00:00:00:\($0 + 10)", name: Optional<String>.none, heartRate: false) }
        #expect(StreamCommand.notFound(["X"], seconds: 2.5, seen: many).contains("in 2.5 s of scanning; seen: C0:00:00:00:00:10, ") == true)
        #expect(StreamCommand.notFound(["X"], seconds: 10, seen: many).contains(" and 2 more (blegate scan") == true)
        #expect(StreamCommand.notFound(["X", "Y"], seconds: 10, seen: []).hasPrefix("no device matching \"X\" or \"Y\" found in 10 s of scanning; seen: no device at all"))
    }
}
