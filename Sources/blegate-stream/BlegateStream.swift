// SPDX-License-Identifier: MIT
import ScanStreamCommands
import SystemSupport

/// `blegate scan` and `blegate stream` in a process of their own.
///
/// `blegate` hands these two commands over to this executable (same arguments, same
/// process id, through exec). It links only the stream path: no Foundation, SQLite,
/// HTTP client, TLS or argument parser, whose pages would otherwise be most of what a
/// stream holds in memory (docs/benchmarks.md, `blegate stream`). Run on its own it behaves the
/// same.
@main
enum BlegateStream {
    static func main() {
        MallocTuning.limitArenas()
        LinkMain.main(Array(CommandLine.arguments.dropFirst()))
    }
}
