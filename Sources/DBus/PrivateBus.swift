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

        let args = [daemon, "--config-file=" + configPath, "--nofork", "--nopidfile", "--nosyslog"]
        var pid: pid_t = 0
        var cArgs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        let rc = posix_spawnp(&pid, daemon, nil, nil, &cArgs, environ)
        guard rc == 0 else {
            throw DBusError(.failed, "cannot start \(daemon): \(String(cString: strerror(rc))) (install the 'dbus' package)")
        }
        // Ready when the socket accepts connections.
        var waited = 0
        while access(socket, F_OK) != 0 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw DBusError(.failed, "\(daemon) exited at start (status \(status))")
            }
            guard waited < 10_000 else {
                kill(pid, SIGKILL)
                throw DBusError(.failed, "\(daemon) did not create its socket within 10 s")
            }
            usleep(5_000)
            waited += 5
        }
        return PrivateBus(address: "unix:path=" + socket, directory: dir, pid: pid)
    }

    private init(address: String, directory: String, pid: Int32) {
        self.address = address
        self.directory = directory
        self.pid = pid
    }

    public var busAddress: DBusBusAddress { .address(address) }

    /// Stops the daemon and removes its files. Idempotent.
    public func stop() {
        if kill(pid, SIGTERM) == 0 {
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        unlink(directory + "/bus")
        unlink(directory + "/bus.conf")
        rmdir(directory)
    }

    deinit { stop() }
}
