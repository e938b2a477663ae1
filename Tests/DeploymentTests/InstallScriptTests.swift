// SPDX-License-Identifier: MIT
import Glibc
import Testing

/// scripts/install.sh run for real into a throw-away root (`--root DIR`): users and
/// groups through useradd/groupadd --root, the unit enabled through
/// `systemctl --root`, nothing started. Then the same root is upgraded, uninstalled
/// and purged.
@Suite("install.sh in a throw-away root", .serialized)
struct InstallScriptTests {
    static let canStage = getuid() == 0 && Support.hasTool("useradd") && Support.hasTool("systemctl")

    /// A root with the user database a fresh Debian has (root only; no bluetooth group:
    /// the script must create it when bluez is not installed).
    static func makeRoot() -> String {
        let root = Support.makeTempDirectory("blegate-root")
        mkdir(root + "/etc", 0o755)
        Support.write(root + "/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n")
        Support.write(root + "/etc/group", "root:x:0:\n")
        Support.write(root + "/etc/shadow", "root:*:19000:0:99999:7:::\n")
        Support.write(root + "/etc/gshadow", "root:*::\n")
        chmod(root + "/etc/shadow", 0o600)
        chmod(root + "/etc/gshadow", 0o600)
        return root
    }

    static func install(_ root: String, _ extra: String = "") async -> (out: String, status: Int32) {
        await Support.shell("\(Support.quote(Support.projectRoot + "/scripts/install.sh")) --root \(Support.quote(root)) --no-build --binary \(Support.quote(Support.blegateBinary)) \(extra)")
    }

    static func passwdEntry(_ root: String, _ user: String) -> [Substring]? {
        Support.read(root + "/etc/passwd")?.split(separator: "\n").map { $0.split(separator: ":", omittingEmptySubsequences: false) }.first { $0.first.map(String.init) == user }
    }

    static func groupMembers(_ root: String, _ group: String) -> [String]? {
        guard let fields = Support.read(root + "/etc/group")?.split(separator: "\n").map({ $0.split(separator: ":", omittingEmptySubsequences: false) }).first(where: { $0.first.map(String.init) == group }),
              fields.count == 4 else { return nil }
        return fields[3].split(separator: ",").map(String.init)
    }

    @Test("--kiosk: the wall opens full-screen at the desktop's start, at the configured port",
          .enabled(if: canStage, "skipped: needs root, useradd and systemctl (the test stages users into a scratch root)"))
    func kiosk() async throws {
        let root = Self.makeRoot()
        defer { Support.removeTree(root) }
        let (out, status) = await Self.install(root, "--kiosk")
        #expect(status == 0, "\(out)")
        let desktop = try #require(Support.read(root + "/etc/xdg/autostart/blegate-wall.desktop"))
        #expect(desktop.contains("Exec=/usr/local/bin/blegate-wall-kiosk"))
        if Support.hasTool("desktop-file-validate") {
            let v = await Support.shell("desktop-file-validate \(Support.quote(root + "/etc/xdg/autostart/blegate-wall.desktop")) 2>&1")
            #expect(v.status == 0, "\(v.out)")
        }
        let wrapper = root + "/usr/local/bin/blegate-wall-kiosk"
        #expect(Support.info(wrapper)?.mode == 0o755)
        // The wrapper with a stand-in browser that records its arguments.
        let bin = root + "/fake-bin"
        mkdir(bin, 0o755)
        Support.write(bin + "/chromium", "#!/bin/sh\necho \"$@\" > \(Support.quote(root + "/args"))\n")
        chmod(bin + "/chromium", 0o755)
        Support.write(root + "/wall.toml", "[display]\nlisten = \"0.0.0.0:9123\"\n")
        let run = await Support.shell("PATH=\(Support.quote(bin)):/usr/bin:/bin BLEGATE_CONFIG=\(Support.quote(root + "/wall.toml")) BLEGATE_KIOSK_WAIT=1 DISPLAY= \(Support.quote(wrapper)) 2>&1")
        #expect(run.status == 0, "\(run.out)")
        let args = Support.read(root + "/args") ?? ""
        #expect(args.contains("--kiosk") && args.contains("http://localhost:9123/"), "\(args)")
        // Uninstall removes both.
        _ = await Self.install(root, "--uninstall")
        #expect(Support.read(root + "/etc/xdg/autostart/blegate-wall.desktop") == nil)
        #expect(Support.info(wrapper) == nil)
    }

    @Test("install, re-install, uninstall, purge",
          .enabled(if: canStage, "skipped: needs root, useradd and systemctl (the test stages users into a scratch root)"))
    func lifecycle() async throws {
        try #require(access(Support.blegateBinary, X_OK) == 0, "no blegate binary at \(Support.blegateBinary)")
        let root = Self.makeRoot()
        defer { Support.removeTree(root) }

        // 1. First install.
        var (out, status) = await Self.install(root)
        #expect(status == 0, "\(out)")
        let user = try #require(Self.passwdEntry(root, "blegate"), "no blegate user:\n\(out)")
        let uid = try #require(UInt32(user[2]))
        let gid = try #require(UInt32(user[3]))
        #expect(user[5] == "/var/lib/blegate")
        #expect(user[6] == "/usr/sbin/nologin")
        #expect(Self.groupMembers(root, "bluetooth")?.contains("blegate") == true)
        #expect(uid < 1000, "a system user")

        let binary = try #require(Support.info(root + "/usr/local/bin/blegate"))
        #expect(binary.mode == 0o755 && binary.uid == 0)
        #expect(out.contains("installed /usr/local/bin/blegate"), "\(out)")
        // On the PATH by its name: a shell whose PATH holds the root's /usr/local/bin runs it.
        let onPath = await Support.shell("PATH=\(Support.quote(root + "/usr/local/bin")):/usr/bin:/bin blegate --help 2>&1")
        #expect(onPath.status == 0 && onPath.out.contains("status"), "\(onPath.out)")
        // The lean executable blegate hands scan and stream to, from beside --binary.
        let lean = try #require(Support.info(root + "/usr/local/bin/blegate-stream"), "no blegate-stream:\n\(out)")
        #expect(lean.mode == 0o755 && lean.uid == 0)
        let config = try #require(Support.info(root + "/etc/blegate/blegate.toml"))
        #expect(config.mode == 0o644)
        #expect(Support.read(root + "/etc/blegate/blegate.toml") == Support.read(Support.projectRoot + "/scripts/blegate.example.toml"))
        let token = try #require(Support.info(root + "/etc/blegate/token"))
        #expect(token.mode == 0o600 && token.uid == uid && token.gid == gid)
        let state = try #require(Support.info(root + "/var/lib/blegate"))
        #expect(state.mode == 0o700 && state.uid == uid)
        #expect(Support.read(root + "/etc/systemd/system/blegate.service") == Support.read(Support.projectRoot + "/scripts/systemd/blegate.service"))
        let wants = root + "/etc/systemd/system/multi-user.target.wants/blegate.service"
        #expect(Support.info(wants)?.isLink == true)
        #expect(Support.linkTarget(wants) == "/etc/systemd/system/blegate.service")
        #expect(Support.read(root + "/etc/udev/rules.d/70-blegate.rules") == Support.read(Support.projectRoot + "/udev/70-blegate.rules"))
        #expect(Support.info(root + "/etc/systemd/system/blegate.service.d/adapter-reset.conf") == nil, "no CAP_NET_ADMIN unless asked")

        // 2. Second run: the owner's config and token stay; a loosened token is fixed;
        //    adapter_reset = true in the config brings the drop-in.
        let edited = (Support.read(root + "/etc/blegate/blegate.toml") ?? "").replacing("# adapter_reset = false", with: "adapter_reset = true").replacing("adapter_reset = false", with: "adapter_reset = true") + "# edited by the owner\n"
        Support.write(root + "/etc/blegate/blegate.toml", edited)
        Support.write(root + "/etc/blegate/token", "secret-token\n")
        chmod(root + "/etc/blegate/token", 0o644)
        (out, status) = await Self.install(root)
        #expect(status == 0, "\(out)")
        #expect(out.contains("kept the existing /etc/blegate/blegate.toml"), "\(out)")
        #expect(Support.read(root + "/etc/blegate/blegate.toml") == edited)
        #expect(Support.read(root + "/etc/blegate/token") == "secret-token\n")
        #expect(Support.info(root + "/etc/blegate/token")?.mode == 0o600)
        #expect(Support.read(root + "/etc/systemd/system/blegate.service.d/adapter-reset.conf") == Support.read(Support.projectRoot + "/scripts/systemd/adapter-reset.conf"))
        #expect(Support.read(root + "/etc/passwd")?.split(separator: "\n").filter { $0.hasPrefix("blegate:") }.count == 1)

        // 3. Uninstall keeps data, config, token and the user.
        (out, status) = await Self.install(root, "--uninstall")
        #expect(status == 0, "\(out)")
        let gonePath = await Support.shell("PATH=\(Support.quote(root + "/usr/local/bin")):/usr/bin:/bin command -v blegate")
        #expect(gonePath.status != 0 && gonePath.out.isEmpty, "blegate still on the PATH: \(gonePath.out)")
        for gone in ["/usr/local/bin/blegate", "/usr/local/bin/blegate-stream", "/etc/systemd/system/blegate.service", "/etc/systemd/system/blegate.service.d",
                     "/etc/udev/rules.d/70-blegate.rules", "/etc/systemd/system/multi-user.target.wants/blegate.service"] {
            #expect(Support.info(root + gone) == nil, "\(gone) left behind")
        }
        #expect(Support.read(root + "/etc/blegate/blegate.toml") == edited)
        #expect(Support.read(root + "/etc/blegate/token") == "secret-token\n")
        #expect(Support.info(root + "/var/lib/blegate") != nil)
        #expect(Self.passwdEntry(root, "blegate") != nil)

        // 4. Purge removes the rest.
        (out, status) = await Self.install(root, "--purge")
        #expect(status == 0, "\(out)")
        #expect(Support.info(root + "/etc/blegate") == nil)
        #expect(Support.info(root + "/var/lib/blegate") == nil)
        #expect(Self.passwdEntry(root, "blegate") == nil)
        #expect(Self.groupMembers(root, "blegate") == nil)
    }

    @Test("wrong options are refused with the reason")
    func badOptions() async {
        var (out, status) = await Support.shell(Support.quote(Support.projectRoot + "/scripts/install.sh") + " --root /nonexistent-blegate-root --no-build --binary /bin/true")
        #expect(status != 0)
        #expect(out.contains("no such directory"), "\(out)")
        let root = Support.makeTempDirectory("blegate-root")
        defer { Support.removeTree(root) }
        (out, status) = await Support.shell(Support.quote(Support.projectRoot + "/scripts/install.sh") + " --root \(root) --no-build")
        #expect(status != 0)
        #expect(out.contains("--no-build needs --binary"), "\(out)")
        (out, status) = await Support.shell(Support.quote(Support.projectRoot + "/scripts/install.sh") + " --root \(root) --frobnicate")
        #expect(status != 0)
        #expect(out.contains("unknown option --frobnicate"), "\(out)")
    }
}
