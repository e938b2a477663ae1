// SPDX-License-Identifier: MIT
import ArgumentParser
import ScanStreamCommands

/// What swift-argument-parser's own `main()` does (parse from the root, run, exit with
/// the command's status), with the main thread parked instead of ending in
/// `dispatch_main()` (see `MainThread`).
enum CommandEntry {
    static func main<Root: ParsableCommand>(_ root: Root.Type) -> Never {
        MainThread.park {
            do {
                var command = try root.parseAsRoot()
                if var command = command as? AsyncParsableCommand {
                    try await command.run()
                } else {
                    try command.run()
                }
                root.exit()
            } catch {
                root.exit(withError: error)
            }
        }
    }
}
