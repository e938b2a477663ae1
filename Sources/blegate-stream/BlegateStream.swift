// SPDX-License-Identifier: MIT
import ArgumentParser
import ScanStreamCommands
import SystemSupport

/// `blegate scan` and `blegate stream` in a process of their own.
///
/// `blegate` hands these two commands over to this executable (same arguments, same
/// process id, through exec), because the stream path alone misses its budget inside the
/// whole binary: `blegate stream` with 10 simulated straps for 40 s peaked at 18.9 MiB RSS
/// when run in `blegate` (15.4 MiB of it the binary's file pages: the stream's code sits
/// among everything else's, and the kernel maps 64 KiB around each touched page) and at
/// 10.7 MiB here, against a budget of 16 MiB (`scripts/bench-stream-rss.sh`). Run on its
/// own it behaves the same.
@main
enum BlegateStream {
    static func main() {
        MallocTuning.limitArenas()
        CommandEntry.main(ScanAndStream.self)
    }
}

/// The two commands under the name a person types.
struct ScanAndStream: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blegate",
        abstract: "A BLE heart-rate gateway for BlueZ on Linux (scan and stream).",
        subcommands: [ScanCommand.self, StreamCommand.self]
    )
}
