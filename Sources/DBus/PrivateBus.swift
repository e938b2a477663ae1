import SystemSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A private `dbus-daemon` started by this process: what `blegate simulate
/// --private-bus` and the tests run on, so nothing touches the machine's buses.
///
/// The configuration raises the daemon's per-connection limits: a simulator
/// emitting tens of thousands of notifications a second must not be disconnected
/// for exceeding the session defaults meant for desktops.
public final class PrivateBus: Sendable {
    public let address: String
    public let directory: String
    public let pid: Int32
    private let stopped = Mutex(false)

    public static func start(daemon: String = "dbus-daemon") throws(DBusError) -> PrivateBus {
        var template = Array("/tmp/blegate-bus-XXXXXX".utf8CString)
        guard let dirPtr = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw DBusError(.failed, "cannot create a directory for the private bus (errno \(errno))")
        }
        let dir = String(cString: dirPtr)
        let socket = dir + "/bus"
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
            <allow user="*"/>
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_incoming_unix_fds">250000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_outgoing_unix_fds">250000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="max_replies_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_names_per_connection">50000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="reply_timeout">300000</limit>
        </busconfig>

        """
        let configPath = dir + "/bus.conf"
        guard let f = fopen(configPath, "w") else { throw DBusError(.failed, "cannot write \(configPath)") }
        fputs(config, f)
        fclose(f)

        // The daemon prints its address on fd 3 once it listens: that, not the socket
        // file appearing (bind comes before listen), is the moment it is ready.
        let readyPipe = try pipe()
        var ready: [Int32] = [readyPipe.read, readyPipe.write]
        defer {
            if ready[0] >= 0 { close(ready[0]) }
            if ready[1] >= 0 { close(ready[1]) }
        }
        // A guard shell owns the daemon and reads a pipe whose write end only this
        // process holds: when this process exits, even by SIGKILL, the pipe closes
        // and the guard stops the daemon, so no test or simulator leaves one behind.
        let lifePipe = try pipe()
        let life: [Int32] = [lifePipe.read, lifePipe.write]
        defer { close(life[0]) }
        let guardScript = #"exec 4<&0 0</dev/null; "$0" "$@" & d=$!; exec 3>&-; trap 'kill $d 2>/dev/null; wait $d; exit 0' TERM INT; read -r _ <&4; kill $d 2>/dev/null; wait $d"#
        let args = ["-c", guardScript, daemon, "--config-file=" + configPath, "--nofork", "--nopidfile", "--nosyslog", "--print-address=3"]
        // The daemon's own chatter (it cannot raise its fd limit when not root, ...)
        // goes to a log beside the socket instead of the caller's terminal.
        let pid: pid_t
        do {
            pid = try Spawn.start("/bin/sh", args, redirects: [
                .copy(0, from: life[0]),
                .open(1, path: dir + "/daemon.log", flags: O_WRONLY | O_CREAT | O_TRUNC),
                .copy(2, from: 1),
                .copy(3, from: ready[1]),
            ])
        } catch {
            close(life[1])
            throw DBusError(.failed, "cannot start \(daemon): \(error.message)")
        }
        close(ready[1])
        ready[1] = -1
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while !line.contains(0x0A) {
            var pfd = pollfd(fd: ready[0], events: Int16(POLLIN), revents: 0)
            let rc = poll(&pfd, 1, 10_000)
            if rc == 0 {
                close(life[1])
                kill(pid, SIGTERM)
                var status: Int32 = 0
                _ = waitpid(pid, &status, 0)
                throw DBusError(.failed, "\(daemon) did not report its address within 10 s")
            }
            if rc < 0 { if errno == EINTR { continue }; break }
            let n = read(ready[0], &chunk, chunk.count)
            if n <= 0 {
                var status: Int32 = 0
                _ = waitpid(pid, &status, 0)
                close(life[1])
                throw DBusError(.failed, "\(daemon) exited at start (status \(status)); is the 'dbus' package installed? See \(dir)/daemon.log")
            }
            line += chunk[0..<n]
        }
        return PrivateBus(address: "unix:path=" + socket, directory: dir, pid: pid, lifeline: life[1])
    }

    private let lifeline: Int32

    private init(address: String, directory: String, pid: Int32, lifeline: Int32) {
        self.address = address
        self.directory = directory
        self.pid = pid
        self.lifeline = lifeline
    }

    public var busAddress: DBusBusAddress { .address(address) }

    /// Stops the daemon and removes its files. Idempotent.
    /// `Spawn.pipe` with its failure as this layer's error.
    private static func pipe() throws(DBusError) -> (read: Int32, write: Int32) {
        do {
            return try Spawn.pipe()
        } catch {
            throw DBusError(.failed, "cannot start dbus-daemon: \(error.message)")
        }
    }

    public func stop() {
        let alreadyStopped = stopped.withLock { done in
            defer { done = true }
            return done
        }
        guard !alreadyStopped else { return }
        close(lifeline)  // the guard stops the daemon and exits
        var status: Int32 = 0
        var waitedMs = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if waitedMs == 3_000 { kill(pid, SIGTERM) }
            if waitedMs >= 6_000 {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(2_000)
            waitedMs += 2
        }
        unlink(directory + "/bus")
        unlink(directory + "/bus.conf")
        unlink(directory + "/daemon.log")
        rmdir(directory)
    }

    deinit { stop() }
}
