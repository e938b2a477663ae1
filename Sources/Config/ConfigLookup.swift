// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Which configuration a command that works on a gateway (`blegate status`, `class`,
/// `workouts`, `export`, `pair`, `devices`, `cache`) uses when none is named, first found
/// wins: `--config`, then `$BLEGATE_CONFIG`, then /etc/blegate/blegate.toml, then the
/// simulator demo's that scripts/start.sh runs (it writes that configuration's path to
/// `demoPointer` and removes it when it stops); else the defaults.
public struct ConfigLookup: Sendable, Equatable {
    public enum Source: String, Sendable, Equatable {
        case option, environment, system, demo, defaults
    }

    /// The file to read; nil: the defaults.
    public var path: String?
    public var source: Source
    /// Which configuration, and why that one, for people (in errors).
    public var description: String

    /// The environment variable that names a configuration.
    public static let environmentVariable = "BLEGATE_CONFIG"

    /// Where scripts/start.sh leaves the path of its demo's configuration:
    /// `$XDG_STATE_HOME/blegate/demo-config`, `$XDG_STATE_HOME` defaulting to
    /// `~/.local/state`. Nil without `HOME` or `XDG_STATE_HOME`.
    public static func demoPointer(environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/blegate/demo-config" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.local/state/blegate/demo-config"
    }

    /// Decides, given the option, the environment and what is on disk (`exists`: is there
    /// a file at this path; `read`: the text of a small file).
    public static func resolve(option: String?, environment: [String: String],
                               defaultPath: String = GatewayConfiguration.defaultPath,
                               exists: (String) -> Bool = ConfigLookup.fileExists,
                               read: (String) -> String? = ConfigLookup.readSmallFile) -> ConfigLookup {
        if let option {
            return ConfigLookup(path: option, source: .option, description: "\(option) (--config)")
        }
        if let env = environment[environmentVariable], !env.isEmpty {
            return ConfigLookup(path: env, source: .environment, description: "\(env) (\(environmentVariable))")
        }
        if exists(defaultPath) {
            return ConfigLookup(path: defaultPath, source: .system, description: defaultPath)
        }
        var demoNote = "no demo from scripts/start.sh running"
        if let pointer = demoPointer(environment: environment), let text = read(pointer) {
            let demo = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            if demo.hasPrefix("/"), exists(demo) {
                return ConfigLookup(path: demo, source: .demo,
                                    description: "\(demo) (the demo scripts/start.sh runs, named in \(pointer))")
            }
            demoNote = "\(pointer) names \(demo.isEmpty ? "nothing" : demo), which does not exist"
        }
        return ConfigLookup(path: nil, source: .defaults,
                            description: "none found, the defaults (no --config, \(environmentVariable) unset, no \(defaultPath), \(demoNote)); "
                                + "name one with --config FILE or \(environmentVariable)=FILE")
    }

    /// What the lookup reads of the process's environment.
    public static func processEnvironment() -> [String: String] {
        var out: [String: String] = [:]
        #if canImport(Glibc)
        for name in [environmentVariable, "XDG_STATE_HOME", "HOME"] {
            if let value = getenv(name) { out[name] = String(cString: value) }
        }
        #endif
        return out
    }

    /// Whether anything is at `path` (a missing default file means "look further"; an
    /// unreadable one is reported when it is read).
    public static func fileExists(_ path: String) -> Bool {
        #if canImport(Glibc)
        var st = stat()
        return stat(path, &st) == 0 || errno != ENOENT
        #else
        return false
        #endif
    }

    /// The first 4 KiB of a file, or nil.
    public static func readSmallFile(_ path: String) -> String? {
        #if canImport(Glibc)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
        #else
        return nil
        #endif
    }
}
