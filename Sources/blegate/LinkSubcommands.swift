// SPDX-License-Identifier: MIT
import ArgumentParser
import ScanStreamCommands

/// `scan` and `stream` as `blegate --help` lists them. Their options are declared and
/// parsed in LinkCommands (`LinkOption`), for the lean `blegate-stream` that `blegate`
/// execs for them; `StreamHandover` sends their command lines (and `help scan`, `help
/// stream`) there before this parser sees them. These wrappers only pass arguments on.
struct ScanSubcommand: AsyncParsableCommand {
    static let configuration = LinkSubcommand.configuration(ScanCommand.self)

    @Argument(parsing: .captureForPassthrough, help: "Options: see 'blegate scan --help'.")
    var options: [String] = []

    func run() async throws {
        try LinkSubcommand.exit(await LinkMain.run([ScanCommand.name] + options))
    }
}

struct StreamSubcommand: AsyncParsableCommand {
    static let configuration = LinkSubcommand.configuration(StreamCommand.self)

    @Argument(parsing: .captureForPassthrough, help: "Options: see 'blegate stream --help'.")
    var options: [String] = []

    func run() async throws {
        try LinkSubcommand.exit(await LinkMain.run([StreamCommand.name] + options))
    }
}

enum LinkSubcommand {
    static func configuration(_ command: any LinkCommand.Type) -> CommandConfiguration {
        CommandConfiguration(commandName: command.name, abstract: command.abstract)
    }

    static func exit(_ status: Int32) throws {
        if status != 0 { throw ExitCode(status) }
    }
}
