// SPDX-License-Identifier: MIT
import DBus
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `blegate` binary from tests: it is built beside the test bundle
/// (`swift build --build-tests` builds every product).
public enum BlegateBinary {
    public static var path: String {
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, exe.count - 1)
        let path = String(decoding: exe[0..<max(0, n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "/" + path.split(separator: "/").dropLast().joined(separator: "/") + "/blegate"
    }

    public static var exists: Bool { access(path, X_OK) == 0 }
}

/// Runs a command line through the shell on a Dispatch thread, so that an in-process
/// simulator keeps the cooperative pool; returns stdout and the exit status.
///
/// Unlike `popen`, the child gets only stdin, stdout and stderr: the test process holds
/// sockets without close-on-exec (swift-nio's), and a child that inherited a test
/// backend's listening socket would keep it listening through the backend's outage.
public func shell(_ command: String) async -> (out: String, status: Int32) {
    await withCheckedContinuation { cont in
        DispatchQueue.global().async {
            cont.resume(returning: shellBlocking(command))
        }
    }
}

/// `shell` on the calling thread, for facts read once outside the cooperative pool.
public func shellBlocking(_ command: String) -> (out: String, status: Int32) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return ("pipe failed", -1) }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    ChildDescriptors.closeAll(from: 3, in: &actions)
    // Dispatch threads block signals and a child inherits the mask: reset it, so the
    // command gets SIGTERM and SIGINT as it would from a terminal.
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attr, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGPIPE)
    posix_spawnattr_setsigdefault(&attr, &defaults)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let words: [String] = ["/bin/sh", "-c", command]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ)
    close(fds[1])
    guard rc == 0 else {
        close(fds[0])
        return ("could not start /bin/sh: \(String(cString: strerror(rc)))", -1)
    }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 8192)
    while true {
        let n = read(fds[0], &buf, buf.count)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        bytes.append(contentsOf: buf[0..<n])
    }
    close(fds[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exited = (status & 0x7F) == 0
    return (String(decoding: bytes, as: UTF8.self), exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
}

/// A command started in the background, with its stdout and stderr in files.
public struct BackgroundProcess: Sendable {
    public let pid: Int32
    public let directory: String

    public var stdoutPath: String { directory + "/stdout" }
    public var stderrPath: String { directory + "/stderr" }
    public var statusPath: String { directory + "/status" }

    /// Starts `command` (a shell command line) in its own directory under /tmp.
    public static func start(_ command: String) async throws -> BackgroundProcess {
        var template = Array("/tmp/blegate-test.XXXXXX".utf8CString)
        guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw TestSupportError("mkdtemp failed")
        }
        // The subshell must not keep popen's pipe open, or `shell` would wait for it.
        let script = "( \(command) > '\(dir)/stdout' 2> '\(dir)/stderr' < /dev/null; echo $? > '\(dir)/status' ) > /dev/null 2>&1 < /dev/null & echo $!"
        // The subshell's pid; the command is its child. Signals go to the command itself.
        let (out, _) = await shell(script + " ; sleep 0.2; pgrep -P $! | head -1")
        let lines = out.split(separator: "\n").compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
        guard let pid = lines.last else { throw TestSupportError("could not start: \(command): \(out)") }
        return BackgroundProcess(pid: pid, directory: dir)
    }

    public func signal(_ sig: Int32) { kill(pid, sig) }

    /// Waits up to `timeout` seconds for the command to end; returns its exit status.
    public func wait(timeout: Double) async -> Int32? {
        let steps = Int(timeout * 10)
        for _ in 0..<max(1, steps) {
            if let s = readFile(statusPath), let v = Int32(s.trimmingCharacters(in: .whitespacesAndNewlines)) { return v }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    public var stdout: String { readFile(stdoutPath) ?? "" }
    public var stderr: String { readFile(stderrPath) ?? "" }

    /// Waits until stdout contains `text` `count` times (checked every 100 ms).
    public func waitForStdout(_ text: String, count: Int = 1, timeout: Double) async -> Bool {
        for _ in 0..<Int(timeout * 10) {
            if stdout.components(text) >= count { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Waits until stderr contains `text` (checked every 100 ms).
    public func waitForStderr(_ text: String, count: Int = 1, timeout: Double) async -> Bool {
        for _ in 0..<Int(timeout * 10) {
            if stderr.components(text) >= count { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public func readFile(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var out = [UInt8]()
    var buf = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        out.append(contentsOf: buf[0..<n])
    }
    return String(decoding: out, as: UTF8.self)
}

extension String {
    /// How many times `needle` occurs.
    public func components(_ needle: String) -> Int {
        components(separatedBy: needle).count - 1
    }
}
