// SPDX-License-Identifier: MIT

#if canImport(Glibc)
import Glibc
#endif

/// Reading the files the config names: the config itself, the backend token and the cache
/// key. Secrets must be private to their owner (no group or other permission bits),
/// because a token or key readable by every local user is not a secret.
public enum SecretFile {
    /// The bytes of a secret file; `key` names the config key for the error.
    public static func read(path: String, key: String, example: String) throws(ConfigError) -> [UInt8] {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let e = errno
            if e == ENOENT {
                throw ConfigError(.missingFile, key: key, problem: "file \(path) does not exist", example: example)
            }
            throw ConfigError(.unreadableFile, key: key, problem: "cannot read \(path): \(errorText(e))", example: example)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw ConfigError(.unreadableFile, key: key, problem: "\(path) is not a regular file", example: example)
        }
        let mode = st.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw ConfigError(.insecurePermissions, key: key,
                              problem: "\(path) has mode \(octal(mode)); it must be readable by its owner only (mode 0600): chmod 600 \(path)",
                              example: example)
        }
        return try readBytes(path: path, key: key, example: example)
    }

    /// A 32-byte AES-256 key from a file holding 32 raw bytes or 64 hex characters.
    public static func readKey(path: String, key: String = "cache.encryption_key_file") throws(ConfigError) -> [UInt8] {
        let example = "head -c 32 /dev/urandom > \(path) && chmod 600 \(path)"
        let bytes = try read(path: path, key: key, example: example)
        if bytes.count == 32 { return bytes }
        // Hex, with an optional trailing newline.
        var text = bytes
        while let last = text.last, last == 0x0A || last == 0x0D || last == 0x20 { text.removeLast() }
        if text.count == 64, let decoded = decodeHex(text) { return decoded }
        throw ConfigError(.unreadableFile, key: key,
                          problem: "\(path) must hold 32 raw bytes or 64 hex characters, got \(bytes.count) bytes",
                          example: example)
    }

    /// A bearer token: the file's text without surrounding whitespace.
    public static func readToken(path: String, key: String = "backend.token_file") throws(ConfigError) -> String {
        let example = "printf '%s' \"$TOKEN\" > \(path) && chmod 600 \(path)"
        let bytes = try read(path: path, key: key, example: example)
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard !text.isEmpty, !text.contains(where: { $0.isNewline || $0 == " " }) else {
            throw ConfigError(.unreadableFile, key: key, problem: "\(path) must hold one token on one line", example: example)
        }
        return text
    }

    /// A whole text file (the config itself: no permission rule).
    public static func readText(path: String, key: String) throws(ConfigError) -> String {
        let example = "blegate run --config /etc/blegate/blegate.toml"
        var st = stat()
        guard stat(path, &st) == 0 else {
            let e = errno
            throw ConfigError(e == ENOENT ? .missingFile : .unreadableFile, key: key,
                              problem: e == ENOENT ? "file does not exist" : "cannot read: \(errorText(e))", example: example)
        }
        let bytes = try readBytes(path: path, key: key, example: example)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func readBytes(path: String, key: String, example: String) throws(ConfigError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ConfigError(.unreadableFile, key: key, problem: "cannot read \(path): \(errorText(errno))", example: example)
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ConfigError(.unreadableFile, key: key, problem: "cannot read \(path): \(errorText(errno))", example: example)
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
            guard out.count <= 16 * 1_048_576 else {
                throw ConfigError(.unreadableFile, key: key, problem: "\(path) is larger than 16 MiB", example: example)
            }
        }
        return out
    }

    static func errorText(_ e: Int32) -> String { String(cString: strerror(e)) }

    static func octal(_ mode: mode_t) -> String {
        let s = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }

    static func decodeHex(_ text: [UInt8]) -> [UInt8]? {
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var i = 0
        while i + 1 < text.count {
            guard let h = nibble(text[i]), let l = nibble(text[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}

extension GatewayConfiguration {
    /// The cache encryption key, or nil when encryption is off.
    public func loadEncryptionKey() throws(ConfigError) -> [UInt8]? {
        guard let path = cache.encryptionKeyFile else { return nil }
        return try SecretFile.readKey(path: path)
    }

    /// The coach PIN (`[coach] pin_file`: 4 to 32 characters on one line, the file
    /// readable by its owner only), or nil when there is no coach page.
    public func loadCoachPIN() throws(ConfigError) -> String? {
        guard let path = coach.pinFile else { return nil }
        let example = "printf '%s' 482913 > \(path) && chmod 600 \(path)"
        let pin = try SecretFile.readToken(path: path, key: "coach.pin_file")
        guard (4...32).contains(pin.count) else {
            throw ConfigError(.unreadableFile, key: "coach.pin_file", problem: "\(path) must hold a PIN of 4 to 32 characters, got \(pin.count)",
                              example: example)
        }
        return pin
    }

    /// The backend bearer token, or nil when no token file is configured.
    public func loadBackendToken() throws(ConfigError) -> String? {
        guard let path = backend.tokenFile else { return nil }
        return try SecretFile.readToken(path: path)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
