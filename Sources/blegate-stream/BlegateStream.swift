// SPDX-License-Identifier: MIT
import ArgumentParser
import Gateway
import LinkCommands

/// `blegate scan` and `blegate stream` in a process of their own.
///
/// `blegate` hands these two commands over to this executable (same arguments, same
/// process id, through exec). It links only the stream path: no Foundation, SQLite,
/// HTTP client or TLS, whose pages would otherwise be most of what a stream holds in
/// memory (docs/benchmarks.md, "Memory"). Run on its own it behaves the same.
@main
struct BlegateStream: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blegate",
        abstract: "A BLE heart-rate gateway for BlueZ on Linux (scan and stream).",
        subcommands: [ScanCommand.self, StreamCommand.self]
    )

    static func main() async {
        MallocTuning.limitArenas()
        await CommandEntry.run(BlegateStream.self)
    }
}
