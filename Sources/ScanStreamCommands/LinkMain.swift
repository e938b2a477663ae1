// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The entry point of `scan` and `stream`: in `blegate-stream`, and in `blegate` when it
/// runs them itself.
public enum LinkMain {
    public static let commands: [any LinkCommand.Type] = [ScanCommand.self, StreamCommand.self]

    /// Parses `arguments` (the subcommand first), runs the command and returns the exit
    /// status: 0 for help, 64 (EX_USAGE, as swift-argument-parser uses) for a command
    /// line that does not fit, else the command's own.
    public static func run(_ arguments: [String]) async -> Int32 {
        guard let first = arguments.first, first != "-h", first != "--help", first != "help" else {
            let topic = arguments.count > 1 ? arguments[1] : nil
            if let topic, let command = commands.first(where: { $0.name == topic }) {
                printOutput(command.help)
            } else {
                printOutput(overview)
            }
            return 0
        }
        guard let type = commands.first(where: { $0.name == first }) else {
            printError("Error: unknown command '\(first)'\n\n" + overview)
            return 64
        }
        return await run(type, Array(arguments.dropFirst()))
    }

    private static func run(_ type: any LinkCommand.Type, _ arguments: [String]) async -> Int32 {
        do throws(LinkUsageError) {
            let parsed = try LinkArguments(arguments, options: type.options)
            if parsed.helpRequested {
                printOutput(type.help)
                return 0
            }
            return await (try type.init(parsed)).run()
        } catch {
            printError("Error: \(error.message)\nUsage: \(type.usage)\n  See 'blegate \(type.name) --help' for more information.")
            return 64
        }
    }

    static var overview: String {
        let rows = commands.map { "  \($0.name)" + String(repeating: " ", count: 10 - $0.name.count) + $0.abstract }
        return """
            OVERVIEW: A BLE heart-rate gateway for BlueZ on Linux (scan and stream).

            USAGE: blegate <subcommand>

            SUBCOMMANDS:
            \(rows.joined(separator: "\n"))

              See 'blegate help <subcommand>' for detailed help.

            """
    }

    /// Runs `arguments` on the cooperative pool and parks the main thread until it exits.
    public static func main(_ arguments: [String]) -> Never {
        MainThread.park {
            exit(await run(arguments))
        }
    }

    private static func printOutput(_ text: String) { writeAll(1, text) }
}

/// Keeps the main thread out of `dispatch_main()`.
///
/// An `async` main ends the main thread in `dispatch_main()`, which calls `pthread_exit`:
/// glibc then unwinds the main thread's stack, and the unwinder's binary search of
/// `.eh_frame_hdr` (with the kernel's 64 KiB fault-around) leaves most of the unwind
/// tables resident for the life of the process: 0.6 MiB of `blegate-stream`, 0.9 MiB of
/// `blegate run` (pagemap). Nothing in blegate runs on the
/// main actor, so the main queue need not be served.
public enum MainThread {
    /// Starts `body` as a detached task and never returns: `body` ends the process.
    public static func park(_ body: @escaping @Sendable () async -> Never) -> Never {
        Task.detached { await body() }
        while true { pause() }
    }
}
