// SPDX-License-Identifier: MIT
import ArgumentParser

/// What swift-argument-parser's own `main()` does: parse the command line from the root,
/// run the command, exit with its status. For roots whose `main()` acts first (blegate
/// hands scan and stream over; blegate-stream caps malloc arenas).
public enum CommandEntry {
    public static func run<Root: ParsableCommand>(_ root: Root.Type) async {
        do {
            var command = try root.parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            root.exit(withError: error)
        }
    }
}
