// SPDX-License-Identifier: MIT
import ArgumentParser
import Classes
import Config
import BlegateRun
import ScanStreamCommands

/// `blegate class`, `blegate class start`, `blegate class stop`: staff run a class by hand
/// through the running gateway (the timetable in `[[classes]]` needs no command).
struct ClassCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "class",
        abstract: "Show, start or stop the class the gateway is running.",
        discussion: """
            Talks to the running gateway on status.socket. With no subcommand, shows the \
            running class. When a class ends (stopped here, or at the end of its slot in \
            [[classes]]), every member heard in it gets a workout, sent to the backend. \
            Exit status: 0 done, 1 the gateway is not running or did not answer, 2 refused \
            (a class already runs, or none runs), 78 configuration error.
            """,
        subcommands: [Show.self, Start.self, Stop.self],
        defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the running class.")
        @OptionGroup var gateway: GatewayOptions
        @Flag(help: "Print the answer as JSON.") var json = false

        func run() async throws {
            let config = try gateway.load()
            let (answer, line) = try ClassCommand.exchange(config, .classShow, configuration: gateway.lookup)
            if json { print(line); return }
            guard let c = answer.classReport else {
                print("no class is running")
                return
            }
            print(ClassCommand.describe(c, running: true))
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Start a class now.")
        @OptionGroup var gateway: GatewayOptions
        @Option(help: "The class's name, as members and coaches will see it (\"Spin 07:00\").") var name: String
        @Option(help: "The workout type: \(ClassType.allCases.map(\.rawValue).joined(separator: ", ")).") var type: String = "other"

        func validate() throws {
            guard ClassType(rawValue: type) != nil else {
                throw ValidationError("--type must be one of \(ClassType.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(type)\"")
            }
        }

        @Flag(help: "Print the answer as JSON (times in UTC, to the millisecond).") var json = false

        func run() async throws {
            let config = try gateway.load()
            let (answer, line) = try ClassCommand.exchange(config, .classStart(name: name, type: type), configuration: gateway.lookup)
            if json { print(line); return }
            guard let c = answer.classReport else { return }
            print("started " + ClassCommand.describe(c, running: true))
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stop", abstract: "End the running class; its workouts go out.")
        @OptionGroup var gateway: GatewayOptions
        @Flag(help: "Print the answer as JSON (times in UTC, to the millisecond).") var json = false

        func run() async throws {
            let config = try gateway.load()
            let (answer, line) = try ClassCommand.exchange(config, .classStop, configuration: gateway.lookup)
            if json { print(line); return }
            guard let c = answer.classReport else { return }
            print("stopped " + ClassCommand.describe(c, running: false))
        }
    }

    /// The gateway's answer; refusals and a gateway that is not running exit non-zero.
    static func ask(_ config: GatewayConfiguration, _ request: StatusRequest, configuration lookup: ConfigLookup) throws -> StatusAnswer {
        try exchange(config, request, configuration: lookup).answer
    }

    /// The answer parsed, and as the gateway sent it.
    static func exchange(_ config: GatewayConfiguration, _ request: StatusRequest,
                         configuration lookup: ConfigLookup) throws -> (answer: StatusAnswer, line: String) {
        let line: String
        do {
            line = try StatusClient.ask(config.status.socket, request, timeout: .seconds(30))
        } catch {
            printError(error.nobodyListening
                ? "blegate class: the gateway is not running (nothing answers on \(config.status.socket); configuration: \(lookup.description)); start it with `blegate run` or `systemctl start blegate`"
                : "blegate class: \(error)")
            throw ExitCode(1)
        }
        guard let answer = try? StatusAnswer(line: line) else {
            printError("blegate class: the gateway answered something else than JSON: \(line)")
            throw ExitCode(1)
        }
        if let error = answer.error {
            printError("blegate class: \(error)")
            throw ExitCode(answer.code == nil ? 1 : 2)
        }
        return (answer, line)
    }

    static func describe(_ c: ClassReport, running: Bool) -> String {
        var text = "\"\(c.name ?? "unnamed class")\" (\(c.type), \(c.origin)) since \(LocalTime.text(iso: c.startTime))"
        if let end = c.endTime { text += " until \(LocalTime.text(iso: end))" }
        else if running, let planned = c.plannedEndTime { text += ", ends at \(LocalTime.text(iso: planned))" }
        return text
    }
}
