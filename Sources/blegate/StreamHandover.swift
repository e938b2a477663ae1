// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Hands `scan` and `stream` to the lean `blegate-stream` executable installed beside
/// this one, whose memory meets the stream budget where this binary's does not (the
/// figures are in `BlegateStream`'s comment). `exec` keeps the process id, arguments,
/// descriptors and signals, so callers see no difference. Without the lean binary (or
/// with `BLEGATE_IN_PROCESS=1`) the commands run here: the same commands, parsed the same
/// way, are linked in both.
enum StreamHandover {
    static let commands: Set<String> = ["scan", "stream"]
    static let executable = "blegate-stream"

    /// Returns when the command line is not `scan` or `stream` (or help for them), or
    /// when they run in this process.
    static func execIfLinkCommand() {
        let args = CommandLine.arguments
        let isLink = args.count >= 2 && commands.contains(args[1])
        let isHelp = args.count == 3 && args[1] == "help" && commands.contains(args[2])
        guard isLink || isHelp, getenv("BLEGATE_IN_PROCESS") == nil, let path = leanExecutable() else { return }
        execv(path, CommandLine.unsafeArgv)
        // Only reached when exec failed: run in this process instead.
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
