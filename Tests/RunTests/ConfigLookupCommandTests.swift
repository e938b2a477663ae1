// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Cache
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The commands that work on a gateway find its configuration without `--config`:
/// `$BLEGATE_CONFIG`, then /etc/blegate/blegate.toml, then the demo scripts/start.sh runs
/// (named in `$XDG_STATE_HOME/blegate/demo-config`); and say which they used when that
/// leads nowhere.
@Suite("commands find the configuration without --config")
struct ConfigLookupCommandTests {
    static let systemConfigPresent = access("/etc/blegate/blegate.toml", F_OK) == 0

    @Test("BLEGATE_CONFIG, then the demo's pointer; with neither, the error names what was looked for",
          .enabled(if: !systemConfigPresent, "skipped: /etc/blegate/blegate.toml exists here and comes before the demo's"))
    func lookupOrder() async throws {
        let f = try RunFixture()
        try f.writeConfig(backendURL: nil)
        let cache = try RecordCache(path: f.dir + "/cache.sqlite")
        try await cache.close()
        let state = f.dir + "/xdg-state"
        let clean = "env -u BLEGATE_CONFIG HOME='\(f.dir)' XDG_STATE_HOME='\(state)'"

        // BLEGATE_CONFIG.
        var (out, status) = await shell("\(clean) BLEGATE_CONFIG='\(f.configPath)' \(f.blegate) workouts 2>&1")
        #expect(status == 0 && out.contains("no workouts in the cache"), "\(out)")

        // Nothing: the defaults, and the error says so and how to name one.
        (out, status) = await shell("\(clean) \(f.blegate) workouts 2>&1")
        #expect(status == 1, "\(out)")
        #expect(out.contains("configuration: none found") && out.contains("BLEGATE_CONFIG"), "\(out)")

        // The pointer scripts/start.sh writes.
        mkdir(state, 0o700)
        mkdir(state + "/blegate", 0o700)
        try (f.configPath + "\n").write(toFile: state + "/blegate/demo-config", atomically: true, encoding: .utf8)
        (out, status) = await shell("\(clean) \(f.blegate) workouts 2>&1")
        #expect(status == 0 && out.contains("no workouts in the cache"), "\(out)")
        // BLEGATE_CONFIG still comes first: a missing file it names is the error, named.
        (out, status) = await shell("\(clean) BLEGATE_CONFIG='\(f.dir)/nowhere.toml' \(f.blegate) status 2>&1")
        #expect(status == 78 && out.contains("nowhere.toml") && out.contains("BLEGATE_CONFIG"), "\(out)")

        // A pointer left by a killed start.sh, to a configuration that is gone.
        try (f.dir + "/gone/blegate.toml\n").write(toFile: state + "/blegate/demo-config", atomically: true, encoding: .utf8)
        (out, status) = await shell("\(clean) \(f.blegate) class 2>&1")
        #expect(status == 1 && out.contains("gone/blegate.toml, which does not exist"), "\(out)")
    }
}
