// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The backend's bearer token lives in a file only its owner may read; the gateway
/// refuses a file others can read, so a leaked SD card image is the only way to lose it.
public enum TokenFile {
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var fix: String
        public var description: String { message }
    }

    public static func read(path: String) throws(Problem) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let reason = String(cString: strerror(errno))
            throw Problem(message: "cannot read the token file \(path): \(reason)",
                          fix: "write the token: sudo install -m 0600 -o blegate -g blegate /dev/null \(path) && sudo nano \(path)")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw Problem(message: "\(path) is not a regular file", fix: "put the token alone in a regular file, mode 0600")
        }
        let mode = st.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw Problem(message: "\(path) has mode 0\(String(mode, radix: 8)): others can read the token",
                          fix: "sudo chmod 0600 \(path)")
        }
        guard let f = fopen(path, "r") else {
            throw Problem(message: "cannot read the token file \(path): \(String(cString: strerror(errno)))",
                          fix: "run as the file's owner (the service user blegate) or as root")
        }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: buf[0..<n])
            if bytes.count > 16384 { break }
        }
        let token = String(decoding: bytes, as: UTF8.self).trimmed()
        guard !token.isEmpty else {
            throw Problem(message: "the token file \(path) is empty", fix: "put the token the backend issued for this gym into \(path)")
        }
        guard bytes.count <= 16384, !token.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x21 || $0 > 0x7E } ?? true }) else {
            throw Problem(message: "the token file \(path) holds more than one printable token (spaces, several lines or control bytes)",
                          fix: "leave only the token itself in \(path)")
        }
        return token
    }
}
