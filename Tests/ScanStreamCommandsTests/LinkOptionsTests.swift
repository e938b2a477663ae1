// SPDX-License-Identifier: MIT
import ScanStreamCommands
import Testing

@Suite("scan and stream options (parsed without swift-argument-parser)")
struct LinkOptionsTests {
    static let options: [LinkOption] = [
        .value("device", "ADDR", help: "a strap", repeatable: true),
        .value("timeout", "S", help: "seconds"),
        .value("slots", "N", help: "count"),
        .flag("json", help: "json lines"),
    ]

    static func parse(_ arguments: [String]) throws(LinkUsageError) -> LinkArguments {
        try LinkArguments(arguments, options: options)
    }

    static func error(_ arguments: [String]) -> String? {
        do throws(LinkUsageError) {
            _ = try parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("--name value, --name=value, flags; repeatable options keep every value in order, others the last")
    func forms() throws {
        let parsed = try Self.parse(["--device", "A0:9E:1A:00:00:01", "--json", "--timeout=2.5", "--device=Polar H10*",
                                     "--timeout", "-1", "--slots", "3"])
        #expect(parsed.strings("device") == ["A0:9E:1A:00:00:01", "Polar H10*"])
        #expect(try parsed.double("timeout") == -1)
        #expect(try parsed.int("slots") == 3)
        #expect(parsed.flag("json"))
        #expect(!parsed.helpRequested)
        let empty = try Self.parse([])
        #expect(empty.strings("device").isEmpty && empty.string("timeout") == nil && !empty.flag("json"))
        #expect(try Self.parse(["--timeout", "1", "-h"]).helpRequested)
        #expect(try Self.parse(["--help"]).helpRequested)
    }

    @Test("every misfit names the argument")
    func errors() throws {
        #expect(Self.error(["--bogus"]) == "unknown option '--bogus'")
        #expect(Self.error(["--timeout"]) == "missing value for '--timeout <S>'")
        #expect(Self.error(["--timeout", "--json"]) == "missing value for '--timeout <S>'")
        #expect(Self.error(["stray"]) == "unexpected argument 'stray'")
        #expect(Self.error(["-x"]) == "unexpected argument '-x'")
        #expect(Self.error(["--json=yes"]) == "'--json' takes no value")
        let parsed = try Self.parse(["--timeout", "soon", "--slots", "2.5"])
        #expect(throws: LinkUsageError("'soon' is not a number, for '--timeout'")) { try parsed.double("timeout") }
        #expect(throws: LinkUsageError("'2.5' is not a whole number, for '--slots'")) { try parsed.int("slots") }
        #expect(throws: LinkUsageError("'inf' is not a number, for '--timeout'")) {
            try Self.parse(["--timeout", "inf"]).double("timeout")
        }
    }

    static func stream(_ arguments: [String]) -> String? {
        do throws(LinkUsageError) {
            _ = try StreamCommand(LinkArguments(arguments, options: StreamCommand.options))
            return nil
        } catch {
            return error.message
        }
    }

    static func scan(_ arguments: [String]) -> String? {
        do throws(LinkUsageError) {
            _ = try ScanCommand(LinkArguments(arguments, options: ScanCommand.options))
            return nil
        } catch {
            return error.message
        }
    }

    @Test("stream and scan check their values, naming the option at fault")
    func validation() {
        #expect(Self.stream([]) == "give at least one --device ADDRESS or NAME")
        #expect(Self.stream(["--device", "X"]) == nil)
        #expect(Self.stream(["--device", "X", "--format", "xml"]) == "--format must be json, text or none")
        #expect(Self.stream(["--device", "X", "--notify", "poll"]) == "--notify must be acquire or start")
        #expect(Self.stream(["--device", "X", "--interval", "0"]) == "--interval must be positive")
        #expect(Self.stream(["--device", "X", "--hrv-window", "5"]) == "--hrv-window must be at least 10 seconds")
        #expect(Self.stream(["--device", "X", "--duration", "-2"]) == "--duration must be positive")
        #expect(Self.stream(["--device", "X", "--gather-ms", "1001"]) == "--gather-ms must be between 0 and 1000")
        #expect(Self.stream(["--device", "X", "--max-per-adapter", "0"]) == "--max-links must be between 1 and 64")
        #expect(Self.stream(["--device", "X", "--format", "text", "--notify", "start", "--interval", "5", "--gather-ms", "0"]) == nil)
        #expect(Self.scan([]) == nil)
        #expect(Self.scan(["--timeout", "0"]) == "--timeout must be positive")
        #expect(Self.scan(["--json", "--all", "--adapter", "hci1", "--timeout", "3"]) == nil)
    }

    @Test("help and usage list every option of both commands")
    func help() {
        for command in LinkMain.commands {
            for option in command.options {
                #expect(command.help.contains("--\(option.name)"), "\(command.name): --\(option.name)")
                #expect(command.usage.contains("--\(option.name)"), "\(command.name): --\(option.name)")
                #expect(command.optionHelp.contains(option.help), "\(command.name): --\(option.name)")
            }
            #expect(command.help.hasPrefix("OVERVIEW: \(command.abstract)"))
        }
        #expect(StreamCommand.usage.contains("[--device <ADDR|NAME> ...]"))
        #expect(ScanCommand.usage.hasPrefix("blegate scan [--adapter <hciN>]"))
    }
}
