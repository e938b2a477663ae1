// SPDX-License-Identifier: MIT
import Config
import Foundation
import Testing

/// A temporary directory removed at deinit.
final class TempDir {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-config-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ bytes: [UInt8], mode: Int) throws -> String {
        let p = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: p)
        return p
    }
}

@Suite("Secret files (key and token)")
struct SecretFileTests {
    @Test("a key file readable by group or others is refused, naming chmod 600")
    func insecureKeyFile() throws {
        let dir = TempDir()
        let p = try dir.write("cache.key", [UInt8](repeating: 7, count: 32), mode: 0o644)
        let config = try GatewayConfiguration.parse(toml: "[cache]\nencryption_key_file = \"\(p)\"")
        do {
            _ = try config.loadEncryptionKey()
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .insecurePermissions)
            #expect(error.key == "cache.encryption_key_file")
            #expect(error.description.contains("mode 0644"))
            #expect(error.description.contains("chmod 600 \(p)"))
        }
    }

    @Test("the coach PIN: one line of 4 to 32 characters, readable by its owner only; no file, no coach page")
    func coachPIN() throws {
        let dir = TempDir()
        #expect(try GatewayConfiguration.parse(toml: "").loadCoachPIN() == nil)
        let good = try dir.write("coach-pin", Array("482913\n".utf8), mode: 0o600)
        let config = try GatewayConfiguration.parse(toml: "[coach]\npin_file = \"\(good)\"\n[display]\nroom = \"Spin studio\"")
        #expect(try config.loadCoachPIN() == "482913")
        #expect(config.display.room == "Spin studio")
        let short = try dir.write("short-pin", Array("123".utf8), mode: 0o600)
        #expect {
            try GatewayConfiguration.parse(toml: "[coach]\npin_file = \"\(short)\"").loadCoachPIN()
        } throws: { e in
            let e = e as! ConfigError
            return e.key == "coach.pin_file" && e.description.contains("4 to 32 characters")
        }
        let open = try dir.write("open-pin", Array("482913".utf8), mode: 0o644)
        #expect {
            try GatewayConfiguration.parse(toml: "[coach]\npin_file = \"\(open)\"").loadCoachPIN()
        } throws: { e in
            let e = e as! ConfigError
            return e.code == .insecurePermissions && e.description.contains("chmod 600")
        }
        #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[coach]\npin_file = \"relative/pin\"") }
    }

    @Test("32 raw bytes or 64 hex characters (with a newline) are both keys")
    func keyForms() throws {
        let dir = TempDir()
        let raw = (0..<32).map { UInt8($0) }
        let p1 = try dir.write("raw.key", raw, mode: 0o600)
        #expect(try SecretFile.readKey(path: p1) == raw)
        let hex = Array((raw.map { String(format: "%02x", $0) }.joined() + "\n").utf8)
        let p2 = try dir.write("hex.key", hex, mode: 0o400)
        #expect(try SecretFile.readKey(path: p2) == raw)
    }

    @Test("a key of the wrong length is refused with its length")
    func wrongLength() throws {
        let dir = TempDir()
        let p = try dir.write("short.key", [1, 2, 3], mode: 0o600)
        #expect {
            try SecretFile.readKey(path: p)
        } throws: { e in
            (e as? ConfigError)?.code == .unreadableFile && "\(e)".contains("got 3 bytes")
        }
    }

    @Test("a missing key file names the key and how to make one")
    func missingKey() throws {
        let config = try GatewayConfiguration.parse(toml: "[cache]\nencryption_key_file = \"/nonexistent/k\"")
        do {
            _ = try config.loadEncryptionKey()
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .missingFile)
            #expect(error.description.contains("cache.encryption_key_file: file /nonexistent/k does not exist"))
            #expect(error.example?.contains("/dev/urandom") == true)
        }
    }

    @Test("an unreadable key file (a directory) is refused")
    func unreadable() throws {
        let dir = TempDir()
        #expect {
            try SecretFile.readKey(path: dir.path)
        } throws: { e in
            (e as? ConfigError)?.code == .unreadableFile || (e as? ConfigError)?.code == .insecurePermissions
        }
    }

    @Test("token: trimmed; insecure mode refused")
    func token() throws {
        let dir = TempDir()
        let good = try dir.write("token", Array("  abc.def  \n".utf8), mode: 0o600)
        var config = GatewayConfiguration()
        config.backend.tokenFile = good
        #expect(try config.loadBackendToken() == "abc.def")
        let bad = try dir.write("token2", Array("abc".utf8), mode: 0o640)
        config.backend.tokenFile = bad
        #expect {
            try config.loadBackendToken()
        } throws: { e in
            (e as? ConfigError)?.code == .insecurePermissions && (e as? ConfigError)?.key == "backend.token_file"
        }
    }
}
