// SPDX-License-Identifier: MIT
import Glibc
import Testing

/// The unit and its drop-in as systemd itself reads them.
@Suite("systemd unit", .serialized)
struct SystemdUnitTests {
    static let hasAnalyze = Support.hasTool("systemd-analyze")

    /// The unit (and optionally the drop-in) in a scratch directory, ExecStart pointing
    /// at the real blegate binary so that verify's executable check is meaningful.
    static func stage(dropIn: Bool) throws -> String {
        let dir = Support.makeTempDirectory("blegate-unit")
        let unit = try #require(Support.read(Support.projectRoot + "/scripts/systemd/blegate.service"))
        try #require(unit.contains("ExecStart=/usr/local/bin/blegate run --config /etc/blegate/blegate.toml"))
        try #require(access(Support.blegateBinary, X_OK) == 0, "no blegate binary at \(Support.blegateBinary)")
        Support.write(dir + "/blegate.service", unit.replacing("/usr/local/bin/blegate", with: Support.blegateBinary))
        if dropIn {
            mkdir(dir + "/blegate.service.d", 0o755)
            let conf = try #require(Support.read(Support.projectRoot + "/scripts/systemd/adapter-reset.conf"))
            Support.write(dir + "/blegate.service.d/adapter-reset.conf", conf)
        }
        return dir
    }

    @Test("systemd-analyze verify accepts the unit, alone and with the adapter-reset drop-in, without a warning",
          .enabled(if: hasAnalyze, "skipped: systemd-analyze is not installed (apt-get install systemd)"),
          arguments: [false, true])
    func verify(dropIn: Bool) async throws {
        let dir = try Self.stage(dropIn: dropIn)
        defer { Support.removeTree(dir) }
        let (out, status) = await Support.shell("systemd-analyze verify " + Support.quote(dir + "/blegate.service"))
        #expect(status == 0, "\(out)")
        #expect(out.trimmingWhitespace().isEmpty, "systemd-analyze verify printed:\n\(out)")
    }

    static func exposure(_ output: String) -> Double? {
        guard let line = output.split(separator: "\n").first(where: { $0.contains("Overall exposure level") }),
              let colon = line.lastIndex(of: ":") else { return nil }
        return Double(line[line.index(after: colon)...].split(separator: " ").first ?? "")
    }

    @Test("systemd-analyze security: exposure 2.0 or lower, with and without CAP_NET_ADMIN",
          .enabled(if: hasAnalyze, "skipped: systemd-analyze is not installed (apt-get install systemd)"),
          arguments: [false, true])
    func security(dropIn: Bool) async throws {
        let dir = try Self.stage(dropIn: dropIn)
        defer { Support.removeTree(dir) }
        let (out, _) = await Support.shell("systemd-analyze security --offline=true --no-pager " + Support.quote(dir + "/blegate.service"))
        let score = try #require(Self.exposure(out), "no exposure level in:\n\(out)")
        print("systemd-analyze security exposure of blegate.service\(dropIn ? " + adapter-reset.conf" : ""): \(score)")
        #expect(score <= 2.0, "\(out)")
        // The drop-in must grant CAP_NET_ADMIN and nothing else; without it, nothing.
        let netAdmin = out.split(separator: "\n").first { $0.contains("CapabilityBoundingSet=~CAP_NET_ADMIN") } ?? ""
        #expect(netAdmin.contains("✗") == dropIn, "\(netAdmin)")
        let others = out.split(separator: "\n").filter { $0.contains("CapabilityBoundingSet=~") && !$0.contains("CAP_NET_ADMIN") }
        #expect(!others.isEmpty)
        for line in others { #expect(line.contains("✓"), "\(line)") }
    }

    @Test("the unit asks for what the issue lists")
    func requiredSettings() throws {
        let unit = try #require(Support.read(Support.projectRoot + "/scripts/systemd/blegate.service"))
        for line in ["Wants=bluetooth.service", "Restart=on-failure", "StateDirectory=blegate", "ConfigurationDirectory=blegate",
                     "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
                     "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_BLUETOOTH", "CapabilityBoundingSet=\n",
                     "SupplementaryGroups=bluetooth", "User=blegate", "Type=notify\n", "WatchdogSec=30s\n", "MemoryMax="] {
            #expect(unit.contains(line), "missing \(line)")
        }
        #expect(unit.split(separator: "\n").contains { $0.hasPrefix("After=") && $0.contains("bluetooth.service") })
        let dropIn = try #require(Support.read(Support.projectRoot + "/scripts/systemd/adapter-reset.conf"))
        #expect(dropIn.contains("CapabilityBoundingSet=CAP_NET_ADMIN\n"))
        #expect(dropIn.contains("AmbientCapabilities=CAP_NET_ADMIN\n"))
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
