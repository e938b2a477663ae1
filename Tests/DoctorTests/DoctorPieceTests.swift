// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Doctor
import Glibc
import HCI
import Testing

@Suite("doctor: main.conf advice")
struct MainConfTests {
    func status(_ text: String, _ name: String) -> DoctorCheck? {
        MainConfAdvice.checks(text: text).first { $0.name == name }
    }

    @Test("Debian's shipped main.conf (everything commented) gets the defaults, and one warning about the 420 ms supervision timeout")
    func debianDefaults() {
        let text = "[General]\n#TemporaryTimeout = 30\n[LE]\n#MinConnectionInterval=\n[GATT]\n#Cache = always\n[Policy]\nAutoEnable=true\n"
        let checks = MainConfAdvice.checks(text: text)
        #expect(checks.filter { $0.status == .fail }.isEmpty, "\(checks)")
        let le = checks.first { $0.name == "main.conf [LE] connection parameters" }
        #expect(le?.status == .warn)
        #expect(le?.fix?.contains("ConnectionSupervisionTimeout = 400") == true)
    }

    @Test("[GATT] Cache: yes and no warn with the exact line; nonsense fails")
    func cache() {
        #expect(status("[GATT]\nCache = always\n", "main.conf [GATT] Cache")?.status == .ok)
        let yes = status("[GATT]\nCache = yes\n", "main.conf [GATT] Cache")
        #expect(yes?.status == .warn)
        #expect(yes?.message.contains("line 2") == true)
        #expect(yes?.fix?.contains("under [GATT] set `Cache = always`") == true)
        #expect(status("[GATT]\nCache=no\n", "main.conf [GATT] Cache")?.status == .warn)
        #expect(status("[GATT]\nCache=sometimes\n", "main.conf [GATT] Cache")?.status == .fail)
    }

    @Test("[LE] parameters: out of range, min above max and a too short supervision timeout fail; short intervals warn")
    func connectionParameters() {
        let name = "main.conf [LE] connection parameters"
        let outOfRange = MainConfAdvice.checks(text: "[LE]\nMinConnectionInterval=2\n").first { $0.name == "main.conf [LE] MinConnectionInterval" }
        #expect(outOfRange?.status == .fail)
        #expect(outOfRange?.message.contains("from 6 to 3200") == true)
        let swapped = status("[LE]\nMinConnectionInterval=80\nMaxConnectionInterval=40\nConnectionSupervisionTimeout=400\n", name)
        #expect(swapped?.status == .fail)
        // 2 x (1 + 4) x 100 x 1.25 ms = 1250 ms > 1000 ms.
        let tooShort = status("[LE]\nMaxConnectionInterval=100\nConnectionLatency=4\nConnectionSupervisionTimeout=100\n", name)
        #expect(tooShort?.status == .fail)
        #expect(tooShort?.fix?.contains("ConnectionSupervisionTimeout = 400") == true)
        let fast = status("[LE]\nMinConnectionInterval=6\nMaxConnectionInterval=12\nConnectionSupervisionTimeout=400\n", name)
        #expect(fast?.status == .warn)
        #expect(fast?.fix?.contains("MinConnectionInterval = 24") == true)
        #expect(status("[LE]\nMinConnectionInterval=24\nMaxConnectionInterval=40\nConnectionSupervisionTimeout=400\n", name)?.status == .ok)
    }

    @Test("TemporaryTimeout and AutoEnable")
    func generalAndPolicy() {
        let t = "main.conf [General] TemporaryTimeout"
        #expect(status("[General]\nTemporaryTimeout = 0\n", t)?.status == .warn)
        #expect(status("[General]\nTemporaryTimeout = 10\n", t)?.status == .warn)
        #expect(status("[General]\nTemporaryTimeout = 3600\n", t)?.status == .warn)
        #expect(status("[General]\nTemporaryTimeout = 120\n", t)?.status == .ok)
        #expect(status("[General]\nTemporaryTimeout = soon\n", t)?.status == .fail)
        let a = "main.conf [Policy] AutoEnable"
        #expect(status("[Policy]\nAutoEnable=false\n", a)?.status == .warn)
        #expect(status("[Policy]\nAutoEnable=true\n", a)?.status == .ok)
    }

    @Test("a line GLib refuses fails (bluetoothd would ignore the whole file); an absent file warns")
    func malformedAndMissing() {
        let bad = MainConfAdvice.checks(text: "[General]\nthis is not a setting\n").first { $0.name == "main.conf" }
        #expect(bad?.status == .fail)
        #expect(bad?.message.contains("line 2") == true)
        #expect(MainConfAdvice.checks(text: "Key = before any section\n").first?.status == .fail)
        #expect(MainConfAdvice.checks(text: nil).first?.status == .warn)
    }

    @Test("battery plugin from bluetoothd's command line")
    func batteryPlugin() {
        #expect(BluetoothdPlugins.isEnabled("battery", arguments: []))
        #expect(BluetoothdPlugins.isEnabled("battery", arguments: ["-n", "-d"]))
        #expect(!BluetoothdPlugins.isEnabled("battery", arguments: ["-P", "battery"]))
        #expect(!BluetoothdPlugins.isEnabled("battery", arguments: ["--noplugin=sap,battery"]))
        #expect(!BluetoothdPlugins.isEnabled("battery", arguments: ["-Pbat*"]))
        #expect(!BluetoothdPlugins.isEnabled("battery", arguments: ["-p", "hostname"]))
        #expect(BluetoothdPlugins.isEnabled("battery", arguments: ["--plugin=battery,hostname"]))
        #expect(BluetoothdPlugins.check(arguments: ["-P", "battery"]).status == .warn)
        #expect(BluetoothdPlugins.check(arguments: ["-n"]).status == .ok)
    }
}

@Suite("doctor: D-Bus policy files")
struct DBusPolicyTests {
    static let debian = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <!-- ../system.conf have denied everything, so we just punch some holes -->
          <policy user="root">
            <allow own="org.bluez"/>
            <allow send_destination="org.bluez"/>
            <allow send_interface="org.bluez.Agent1"/>
          </policy>
          <policy group="bluetooth">
            <allow send_destination="org.bluez"/>
          </policy>
          <policy context="default">
            <allow send_destination="org.bluez"/>
          </policy>
        </busconfig>
        """

    /// What older Raspberry Pi OS and hardened systems ship: no default-context hole.
    static let restrictive = """
        <busconfig>
          <policy user="root"><allow own="org.bluez"/><allow send_destination="org.bluez"/></policy>
          <policy group="bluetooth"><allow send_destination="org.bluez"/></policy>
          <policy context="default"><deny send_destination="org.bluez"/></policy>
        </busconfig>
        """

    @Test("Debian 12's bluetooth.conf lets everyone call org.bluez")
    func debianOpen() {
        var p = DBusPolicy()
        p.add(xml: Self.debian, file: "bluetooth.conf")
        #expect(p.allows(user: "blegate", groups: ["blegate"]))
        #expect(p.grantingGroups == ["bluetooth"])
    }

    @Test("a restrictive policy admits only root and the bluetooth group; mandatory denies win")
    func restrictive() {
        var p = DBusPolicy()
        p.add(xml: Self.restrictive, file: "bluetooth.conf")
        #expect(!p.allows(user: "blegate", groups: ["blegate"]))
        #expect(p.allows(user: "blegate", groups: ["blegate", "bluetooth"]))
        #expect(p.allows(user: "root", groups: ["root"]))
        p.add(xml: "<busconfig><policy context=\"mandatory\"><deny send_destination=\"org.bluez\"/></policy></busconfig>", file: "local.conf")
        #expect(!p.allows(user: "blegate", groups: ["bluetooth"]))
        var none = DBusPolicy()
        none.add(xml: "<busconfig></busconfig>", file: "x")
        #expect(!none.allows(user: "root", groups: []))
    }
}

@Suite("doctor: host pieces")
struct HostPieceTests {
    /// A directory laid out like a Raspberry Pi 4's /proc and /sys: the built-in radio
    /// on a UART, a USB dongle, and wlan0.
    static func piTree() -> String {
        var template = Array("/tmp/blegate-pi.XXXXXX".utf8CString)
        let root = String(cString: mkdtemp(&template)!)
        let sh = """
            cd '\(root)' && mkdir -p proc/device-tree sys/class/bluetooth sys/class/net/wlan0/wireless sys/class/net/eth0 \
              sys/devices/platform/soc/fe201000.serial/serial0/serial0-0/bluetooth/hci0/rfkill0 \
              sys/devices/platform/scb/pcie/usb1/1-1/1-1.3/1-1.3:1.0/bluetooth/hci1/rfkill1 && \
            printf 'Raspberry Pi 4 Model B Rev 1.4\\0' > proc/device-tree/model && \
            ln -s ../../devices/platform/soc/fe201000.serial/serial0/serial0-0/bluetooth/hci0 sys/class/bluetooth/hci0 && \
            ln -s ../../devices/platform/scb/pcie/usb1/1-1/1-1.3/1-1.3:1.0/bluetooth/hci1 sys/class/bluetooth/hci1 && \
            echo 0 > sys/class/bluetooth/hci0/rfkill0/soft && echo 0 > sys/class/bluetooth/hci0/rfkill0/hard && \
            echo 1 > sys/class/bluetooth/hci1/rfkill1/soft && echo 0 > sys/class/bluetooth/hci1/rfkill1/hard
            """
        _ = system(sh)
        return root
    }

    @Test("rfkill state per adapter from sysfs")
    func rfkill() throws {
        let root = Self.piTree()
        defer { _ = system("rm -rf '\(root)'") }
        let files = HostFiles(root: root)
        let hci0 = try #require(RFKillSwitch.of("hci0", files: files))
        #expect(!hci0.blocked)
        #expect(hci0.check(adapter: "hci0").status == .ok)
        let hci1 = try #require(RFKillSwitch.of("hci1", files: files))
        #expect(hci1.soft && !hci1.hard)
        let check = hci1.check(adapter: "hci1")
        #expect(check.status == .fail)
        #expect(check.fix?.contains("rfkill unblock bluetooth") == true)
        #expect(RFKillSwitch.of("hci7", files: files) == nil)
    }

    @Test("Pi model, built-in versus USB radio, Wi-Fi band: a 2.4 GHz link next to the built-in radio warns")
    func coexistence() throws {
        let root = Self.piTree()
        defer { _ = system("rm -rf '\(root)'") }
        let files = HostFiles(root: root)
        #expect(RadioCoexistence.piModel(files: files) == "Raspberry Pi 4 Model B Rev 1.4")
        #expect(RadioCoexistence.isUSB(adapter: "hci0", files: files) == false)
        #expect(RadioCoexistence.isUSB(adapter: "hci1", files: files) == true)
        #expect(RadioCoexistence.wifiInterfaces(files: files) == ["wlan0"])
        let link24 = "Connected to aa:bb:cc:dd:ee:ff (on wlan0)\n\tSSID: gym\n\tfreq: 2437.0\n\tsignal: -50 dBm\n"
        let link5 = "Connected to aa:bb:cc:dd:ee:ff (on wlan0)\n\tSSID: gym\n\tfreq: 5180\n"
        #expect(RadioCoexistence.frequency(iwLinkOutput: link24) == 2437)
        #expect(RadioCoexistence.frequency(iwLinkOutput: "Not connected.\n") == nil)
        let warn = RadioCoexistence.check(adapters: ["hci0"], files: files, links: ["wlan0": link24])
        #expect(warn.status == .warn)
        #expect(warn.message.contains("2437 MHz"))
        #expect(warn.fix?.contains("5 GHz") == true)
        #expect(RadioCoexistence.check(adapters: ["hci0"], files: files, links: ["wlan0": link5]).status == .ok)
        #expect(RadioCoexistence.check(adapters: ["hci1"], files: files, links: ["wlan0": link24]).status == .ok)
        #expect(RadioCoexistence.check(adapters: ["hci0"], files: files, links: ["wlan0": nil]).status == .warn)
        #expect(RadioCoexistence.check(adapters: ["hci0"], files: HostFiles(root: root + "/nowhere"), links: [:]).status == .ok)
    }

    @Test("clock state: TIME_ERROR or STA_UNSYNC mean unsynchronized; the kernel answers")
    func clock() {
        #expect(ClockSync.isSynchronized(state: 0, status: 0x2001))
        #expect(!ClockSync.isSynchronized(state: 5, status: 0))
        #expect(!ClockSync.isSynchronized(state: 0, status: 0x40))
        #expect(ClockSync.read() != nil)
        #expect(ClockSync.check().status != .fail)
    }

    @Test("disk: thresholds, and a state directory that does not exist yet is measured at its parent")
    func disk() throws {
        let mib = DiskSpace.mebibyte
        #expect(DiskSpace.check(stateDirectory: "/x", available: (50 * mib, "/x")).status == .fail)
        let low = DiskSpace.check(stateDirectory: "/x", available: (700 * mib, "/x"))
        #expect(low.status == .warn)
        #expect(low.fix?.contains("max_size = \"175MiB\"") == true)
        #expect(DiskSpace.check(stateDirectory: "/x", available: (4096 * mib, "/x")).status == .ok)
        let measured = try #require(DiskSpace.available(at: "/tmp/blegate-no-such-dir/state"))
        #expect(measured.measured == "/tmp")
        #expect(measured.bytes > 0)
    }

    @Test("bluetoothd version")
    func bluetoothdVersion() {
        #expect(BluetoothdBinary.parseVersion("5.66\n")! == (5, 66))
        #expect(BluetoothdBinary.parseVersion("garbage") == nil)
        #expect(BluetoothdBinary.check(path: nil, versionOutput: nil, onSystemBus: true).status == .fail)
        #expect(BluetoothdBinary.check(path: nil, versionOutput: nil, onSystemBus: false).status == .warn)
        #expect(BluetoothdBinary.check(path: "/usr/sbin/bluetoothd", versionOutput: "5.48", onSystemBus: true).status == .warn)
        #expect(BluetoothdBinary.check(path: "/usr/sbin/bluetoothd", versionOutput: "5.66", onSystemBus: true).status == .ok)
    }

    @Test("token file: missing, readable by others, empty, several tokens, and a good one")
    func tokenFile() throws {
        var template = Array("/tmp/blegate-token.XXXXXX".utf8CString)
        let dir = String(cString: mkdtemp(&template)!)
        defer { _ = system("rm -rf '\(dir)'") }
        let path = dir + "/token"
        #expect(throws: TokenFile.Problem.self) { try TokenFile.read(path: path) }
        func write(_ text: String, mode: mode_t) {
            let f = fopen(path, "w")!
            fputs(text, f)
            fclose(f)
            chmod(path, mode)
        }
        write("abc\n", mode: 0o644)
        do { _ = try TokenFile.read(path: path); Issue.record("accepted mode 0644") } catch { #expect(error.fix == "sudo chmod 0600 \(path)") }
        write("", mode: 0o600)
        do { _ = try TokenFile.read(path: path); Issue.record("accepted an empty file") } catch { #expect(error.message.contains("empty")) }
        write("one\ntwo\n", mode: 0o600)
        do { _ = try TokenFile.read(path: path); Issue.record("accepted two tokens") } catch { #expect(error.message.contains("more than one")) }
        write("s3cret-token\n", mode: 0o600)
        #expect(try TokenFile.read(path: path) == "s3cret-token")
    }

    @Test("the probe's body: the contract's empty batch")
    func probeBody() throws {
        let body = BackendProbe.body(gatewayID: "gym \"north\"")
        #expect(String(decoding: body, as: UTF8.self) == "{\"gateway_id\":\"gym \\\"north\\\"\",\"records\":[]}")
    }

    @Test("backend answers in words")
    func backendAnswers() {
        #expect(BackendProbe.metricsURL(base: "https://b.example/") == "https://b.example/api/v1/metrics")
        #expect(BackendProbe.validate(url: "ftp://x") != nil)
        #expect(BackendProbe.validate(url: "https://") != nil)
        #expect(BackendProbe.validate(url: "http://127.0.0.1:8080") == nil)
        #expect(BackendProbe.check(url: "http://h", status: 200, body: "", error: nil).status == .ok)
        #expect(BackendProbe.check(url: "http://h", status: 401, body: "", error: nil).message.contains("refused the token"))
        #expect(BackendProbe.check(url: "http://h", status: 503, body: "", error: nil).status == .warn)
        #expect(BackendProbe.check(url: "http://h", status: 500, body: "boom", error: nil).message.contains("boom"))
        #expect(BackendProbe.check(url: "http://h", status: nil, body: "", error: "refused").message.contains("unreachable"))
    }

    @Test("report: text lines, fix lines, JSON, failure")
    func report() {
        var r = DoctorReport()
        r.add(.ok("a", "fine"))
        r.add(.warn("b", "meh", fix: "do \"this\""))
        #expect(!r.hasFailures)
        r.add(.fail("c", "broken\nbadly", fix: nil))
        #expect(r.hasFailures)
        #expect(r.text() == "ok    a: fine\nwarn  b: meh\n      fix: do \"this\"\nfail  c: broken\nbadly\n1 ok, 1 warn, 1 fail\n")
        #expect(r.json() == #"{"checks":[{"fix":null,"message":"fine","name":"a","status":"ok"},{"fix":"do \"this\"","message":"meh","name":"b","status":"warn"},{"fix":null,"message":"broken\nbadly","name":"c","status":"fail"}],"fail":1,"ok":1,"warn":1}"#)
    }
}
