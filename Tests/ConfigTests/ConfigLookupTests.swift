// SPDX-License-Identifier: MIT
import Config
import Testing

/// The configuration a command uses without `--config`: first found of `--config`,
/// `$BLEGATE_CONFIG`, /etc/blegate/blegate.toml, the demo scripts/start.sh runs.
@Suite("which configuration a command uses")
struct ConfigLookupTests {
    /// A file system holding `files` (path → text).
    static func resolve(option: String? = nil, environment: [String: String] = ["HOME": "/home/coach"],
                        files: [String: String]) -> ConfigLookup {
        ConfigLookup.resolve(option: option, environment: environment, defaultPath: "/etc/blegate/blegate.toml",
                             exists: { files[$0] != nil }, read: { files[$0] })
    }

    static let pointer = "/home/coach/.local/state/blegate/demo-config"
    static let everything: [String: String] = [
        "/etc/blegate/blegate.toml": "",
        pointer: "/src/blegate/.blegate/demo/blegate.toml\n",
        "/src/blegate/.blegate/demo/blegate.toml": "",
        "/tmp/mine.toml": "",
    ]

    @Test("--config, then BLEGATE_CONFIG, then the system's file, then the demo's, then the defaults")
    func order() {
        var files = Self.everything
        let env = ["HOME": "/home/coach", "BLEGATE_CONFIG": "/tmp/mine.toml"]
        var found = Self.resolve(option: "/x.toml", environment: env, files: files)
        #expect(found.path == "/x.toml" && found.source == .option)
        found = Self.resolve(environment: env, files: files)
        #expect(found.path == "/tmp/mine.toml" && found.source == .environment)
        #expect(found.description.contains("BLEGATE_CONFIG"))
        found = Self.resolve(files: files)
        #expect(found.path == "/etc/blegate/blegate.toml" && found.source == .system)
        files["/etc/blegate/blegate.toml"] = nil
        found = Self.resolve(files: files)
        #expect(found.path == "/src/blegate/.blegate/demo/blegate.toml" && found.source == .demo)
        #expect(found.description.contains(Self.pointer))
        files[Self.pointer] = nil
        found = Self.resolve(files: files)
        #expect(found.path == nil && found.source == .defaults)
        #expect(found.description.contains("--config FILE") && found.description.contains("no /etc/blegate/blegate.toml"), "\(found.description)")
    }

    @Test("an empty BLEGATE_CONFIG counts as unset; a missing one is still used, so reading it names the file")
    func environment() {
        var found = Self.resolve(environment: ["HOME": "/home/coach", "BLEGATE_CONFIG": ""], files: Self.everything)
        #expect(found.source == .system)
        found = Self.resolve(environment: ["BLEGATE_CONFIG": "/nowhere.toml"], files: [:])
        #expect(found.path == "/nowhere.toml" && found.source == .environment)
    }

    @Test("the demo's pointer: under XDG_STATE_HOME when set; a stale one is said and skipped")
    func demoPointer() {
        #expect(ConfigLookup.demoPointer(environment: ["HOME": "/home/coach"]) == Self.pointer)
        #expect(ConfigLookup.demoPointer(environment: ["HOME": "/home/coach", "XDG_STATE_HOME": "/var/state"]) == "/var/state/blegate/demo-config")
        #expect(ConfigLookup.demoPointer(environment: [:]) == nil)
        let found = Self.resolve(files: [Self.pointer: "/gone/blegate.toml\n"])
        #expect(found.source == .defaults)
        #expect(found.description.contains("/gone/blegate.toml, which does not exist"), "\(found.description)")
    }
}
