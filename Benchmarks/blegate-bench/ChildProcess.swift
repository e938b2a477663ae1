// SPDX-License-Identifier: MIT
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif
import Timing

/// Another program run as its own process, measured from outside: CPU with nanosecond
/// resolution (the process's CPU-time clock; /proc/PID/stat counts 10 ms ticks, too
/// coarse for a few milliseconds a second) and memory from /proc/PID/status.
struct ChildProcess {
    let pid: pid_t
    let name: String

    /// Starts `path` with stdout and stderr written to files (nil: /dev/null).
    init(_ path: String, _ args: [String], name: String, stdout: String?, stderr: String?) throws {
        let pid: pid_t
        do {
            pid = try Spawn.start(path, args, redirects: [
                .open(0, path: "/dev/null", flags: O_RDONLY),
                .open(1, path: stdout ?? "/dev/null", flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644),
                .open(2, path: stderr ?? "/dev/null", flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644),
            ])
        } catch {
            throw BenchError(error.message)
        }
        self.pid = pid
        self.name = name
    }

    /// utime+stime of every thread, in seconds, at nanosecond resolution.
    func cpuSeconds() throws -> Double {
        var clock = clockid_t()
        guard clock_getcpuclockid(pid, &clock) == 0 else { throw BenchError("\(name) (pid \(pid)) has no CPU clock: it exited") }
        var ts = timespec()
        guard clock_gettime(clock, &ts) == 0 else { throw BenchError("cannot read the CPU clock of \(name) (errno \(errno))") }
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// A `kB` line of /proc/PID/status (VmHWM: peak RSS, VmRSS, RssAnon, RssFile), in bytes.
    func status(_ field: String) -> Int? {
        guard let text = readText("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter { $0.isNumber }
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// Voluntary and involuntary context switches of all its threads now
    /// (/proc/PID/task/*/status). A voluntary switch is a thread going to sleep: each is
    /// followed by one wake-up.
    /// Context switches per thread (by thread id) so far.
    func contextSwitches() -> [Int: (voluntary: Int, involuntary: Int)] {
        var out: [Int: (voluntary: Int, involuntary: Int)] = [:]
        guard let d = opendir("/proc/\(pid)/task") else { return out }
        defer { closedir(d) }
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let tid = Int(name), let text = readText("/proc/\(pid)/task/\(name)/status") else { continue }
            var voluntary = 0, involuntary = 0
            for line in text.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") {
                    voluntary = Int(line.dropFirst("voluntary_ctxt_switches:".count).filter(\.isNumber)) ?? 0
                } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    involuntary = Int(line.dropFirst("nonvoluntary_ctxt_switches:".count).filter(\.isNumber)) ?? 0
                }
            }
            out[tid] = (voluntary, involuntary)
        }
        return out
    }

    /// Switches between two `contextSwitches()` samples, thread by thread: a thread that
    /// started meanwhile counts from zero. A thread that ended meanwhile (the Swift
    /// runtime retires idle pool threads) is left out, with what it did in the window: a
    /// sum over the threads alive at each sample would count its whole life against it.
    static func contextSwitches(from before: [Int: (voluntary: Int, involuntary: Int)],
                                to after: [Int: (voluntary: Int, involuntary: Int)]) -> (voluntary: Int, involuntary: Int) {
        var voluntary = 0, involuntary = 0
        for (tid, now) in after {
            let then = before[tid] ?? (0, 0)
            voluntary += now.voluntary - then.voluntary
            involuntary += now.involuntary - then.involuntary
        }
        return (voluntary, involuntary)
    }

    /// Waits until the process spends less than `threshold` s of CPU per `interval` s
    /// (it has drained what was queued for it), at most `timeout` s.
    func waitUntilIdle(threshold: Double = 0.002, interval: Double = 0.3, timeout: Double = 30) async throws {
        let end = MonotonicClock.seconds() + timeout
        var last = try cpuSeconds()
        while MonotonicClock.seconds() < end {
            try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            let now = try cpuSeconds()
            if now - last < threshold { return }
            last = now
        }
        throw BenchError("\(name) still busy after \(Int(timeout)) s")
    }

    /// Sends `signal` and reaps the process; SIGKILL after `timeout` s. Returns the exit status.
    @discardableResult
    func stop(_ signal: Int32 = SIGINT, timeout: Double = 60) async -> Int32 {
        kill(pid, signal)
        let end = MonotonicClock.seconds() + timeout
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || r < 0 { return status }
            if MonotonicClock.seconds() > end {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return status
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Whether the process has exited (and is reaped now).
    func hasExited() -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }
}

/// Why a benchmark could not measure.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// A whole file as UTF-8 text, or nil when it cannot be read.
func readText(_ path: String) -> String? {
    readBytes(path).map { String(decoding: $0, as: UTF8.self) }
}

/// Writes `text` to a new file; false when it cannot.
func writeText(_ path: String, _ text: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
}

/// A whole file's bytes, or nil when it cannot be opened.
func readBytes(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0, errno == EINTR { continue }
        if n <= 0 { break }
        out.append(contentsOf: chunk[0..<n])
    }
    return out
}
