// SPDX-License-Identifier: MIT
import ScanStreamCommands
#if canImport(Glibc)
import Glibc
#endif

/// Hands `scan` and `stream` to the lean `blegate-stream` executable installed beside
/// this one.
///
/// This binary links SQLite, the HTTP client, TLS and Foundation for `run`; a stream
/// that followed 50 straps in it held about 29 MiB, nearly all of it those libraries'
/// pages, against about 12 in an executable that links only the stream path. `exec`
/// keeps the process id, arguments, descriptors and signals, so callers see no
/// difference. Without the lean binary (or with `BLEGATE_IN_PROCESS=1`) the commands
/// run here, through the same entry point: they are linked in both.
enum StreamHandover {
    static let commands: Set<String> = ["scan", "stream"]
    static let executable = "blegate-stream"

    /// Returns only when the command line is not `scan` or `stream` (or help for them).
    static func runIfLinkCommand() {
        let args = CommandLine.arguments
        if args.count == 3, args[1] == "help", commands.contains(args[2]) {
            LinkMain.main(Array(args.dropFirst()))
        }
        guard args.count >= 2, commands.contains(args[1]) else { return }
        if getenv("BLEGATE_IN_PROCESS") == nil, let path = leanExecutable() {
            execv(path, CommandLine.unsafeArgv)
            // Only reached when exec failed: run in this process instead.
        }
        LinkMain.main(Array(args.dropFirst()))
    }

    /// Beside this executable (a build directory, /usr/local/bin), or in
    /// ../libexec/blegate/ relative to it.
    static func leanExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let selfPath = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = selfPath.lastIndex(of: "/") else { return nil }
        let dir = String(selfPath[..<slash])
        for candidate in ["\(dir)/\(executable)", "\(dir)/../libexec/blegate/\(executable)"] where access(candidate, X_OK) == 0 {
            return candidate
        }
        return nil
    }
}
