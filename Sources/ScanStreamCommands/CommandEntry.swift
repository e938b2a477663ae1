// SPDX-License-Identifier: MIT
import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// What swift-argument-parser's own `main()` does (parse from the root, run, exit with
/// the command's status), with the main thread parked instead of ending in
/// `dispatch_main()` (see `MainThread`). Both executables start here.
public enum CommandEntry {
    public static func main<Root: ParsableCommand>(_ root: Root.Type) -> Never {
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

/// Keeps the main thread out of `dispatch_main()`.
///
/// An `async` main ends the main thread in `dispatch_main()`, which calls `pthread_exit`:
/// glibc then unwinds the main thread's stack, and the unwinder's binary search of
/// `.eh_frame_hdr` (with the kernel's 64 KiB fault-around) leaves most of the unwind
/// tables resident for the life of the process (0.6 to 0.9 MiB, by pagemap). Nothing in
/// blegate runs on the main actor, so the main queue need not be served.
public enum MainThread {
    /// Starts `body` as a detached task and never returns: `body` ends the process.
    public static func park(_ body: @escaping @Sendable () async -> Never) -> Never {
        Task.detached { await body() }
        while true { pause() }
    }
}
