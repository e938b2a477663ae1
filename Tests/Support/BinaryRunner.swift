// SPDX-License-Identifier: MIT
import SystemSupport
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `blegate` binary from tests: it is built beside the test bundle
/// (`swift build --build-tests` builds every product). `BLEGATE_BIN_DIR=DIR` runs the
/// `blegate` and `blegate-stream` in DIR instead, so that the process-level suites also
/// check the binaries of scripts/build-release.sh, which is what ships.
public enum BlegateBinary {
    public static var path: String {
        if let dir = getenv("BLEGATE_BIN_DIR").map({ String(cString: $0) }), !dir.isEmpty {
            return dir.hasSuffix("/") ? dir + "blegate" : dir + "/blegate"
        }
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, exe.count - 1)
        let path = String(decoding: exe[0..<max(0, n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "/" + path.split(separator: "/").dropLast().joined(separator: "/") + "/blegate"
    }

    public static var exists: Bool { access(path, X_OK) == 0 }
}

/// The executable a process is running (`/proc/PID/exe`), e.g. to see that `blegate
/// stream` handed itself over to `blegate-stream`.
public func executablePath(of pid: Int32) -> String? {
    var exe = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/\(pid)/exe", &exe, exe.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
    do {
        let (out, status) = try Spawn.output("/bin/sh", ["-c", command], mergeStderr: false)
        return (out, status)
    } catch {
        return ("\(error)", -1)
    }
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
        // The subshell starts the command as its own background child, so `$!` is the
        // command's pid (a simple command is exec'd in the forked child), writes it to a file
        // (renamed into place, so a reader never sees half of it), waits for the command and
        // writes its status. The outer shell returns at once and keeps no pipe open.
        let pidPath = dir + "/pid"
        let script = "( \(command) > '\(dir)/stdout' 2> '\(dir)/stderr' < /dev/null & "
            + "echo $! > '\(pidPath).new' && mv '\(pidPath).new' '\(pidPath)'; wait $!; echo $? > '\(dir)/status' ) "
            + "> /dev/null 2>&1 < /dev/null &"
        let (out, status) = await shell(script)
        guard status == 0 else { throw TestSupportError("could not start: \(command): \(out)") }
        var pid: Int32?
        _ = await eventually(timeout: 30, every: .milliseconds(10)) {
            pid = readFile(pidPath).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return pid != nil
        }
        guard let pid else { throw TestSupportError("no pid within 30 s: \(command)") }
        return BackgroundProcess(pid: pid, directory: dir)
    }

    public func signal(_ sig: Int32) { kill(pid, sig) }

    /// Waits up to `timeout` seconds for the command to end; returns its exit status.
    public func wait(timeout: Double) async -> Int32? {
        var status: Int32?
        _ = await eventually(timeout: timeout) {
            status = readFile(statusPath).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return status != nil
        }
        return status
    }

    public var stdout: String { readFile(stdoutPath) ?? "" }
    public var stderr: String { readFile(stderrPath) ?? "" }

    /// Waits until stdout contains `text` `count` times (checked every 100 ms).
    public func waitForStdout(_ text: String, count: Int = 1, timeout: Double) async -> Bool {
        await eventually(timeout: timeout) { stdout.components(text) >= count }
    }

    /// Waits until stderr contains `text` (checked every 100 ms).
    public func waitForStderr(_ text: String, count: Int = 1, timeout: Double) async -> Bool {
        await eventually(timeout: timeout) { stderr.components(text) >= count }
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
