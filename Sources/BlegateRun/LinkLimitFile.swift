// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StrapLinks
import Synchronization

/// Learned link limits in `<state_directory>/link-limits.json`, by adapter address:
/// `{"B8:27:EB:12:34:56": 5}`. Written whole to a temporary file, flushed and renamed,
/// so a power cut leaves the old file or the new one. A file that cannot be read is
/// ignored (the limits are learned again); one that cannot be written is reported once.
///
/// Plain file calls rather than Foundation's file APIs, which would bring their code into
/// every `blegate run`'s memory for a file of a few bytes; the JSON through `JSONEncoder`
/// and `JSONDecoder` like the gateway's other files.
final class LinkLimitFile: LinkLimitMemory, Sendable {
    let path: String
    private let onError: @Sendable (String) -> Void
    /// One save at a time: two adapters learning at once would both write `path.tmp`,
    /// and the second rename would find it gone.
    private let saving = Mutex(())

    init(path: String, onError: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.onError = onError
    }

    func load() -> [String: Int] {
        guard let text = Self.read(path), let members = try? JSONDecoder().decode([String: Limit].self, from: Data(text.utf8)) else {
            return [:]
        }
        var limits: [String: Int] = [:]
        for (address, value) in members {
            if let n = value.links, n > 0 { limits[address.uppercased()] = n }
        }
        return limits
    }

    func save(_ limits: [String: Int]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // A dictionary of integers: encoding cannot fail.
        let json = (try? encoder.encode(limits)) ?? Data("{}".utf8)
        if let problem = saving.withLock({ _ in Self.replace(path, with: Array(json)) }) {
            onError("cannot save learned link limits to \(path): \(problem)")
        }
    }

    /// One adapter's limit; anything but a whole number is ignored rather than failing
    /// the file (a hand edit of one entry keeps the others).
    private struct Limit: Decodable {
        var links: Int?

        init(from decoder: any Decoder) throws {
            links = try? decoder.singleValueContainer().decode(Int.self)
        }
    }

    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return n == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return nil
    }

    /// Writes `path.tmp`, flushes it and renames it over `path`; the reason when it cannot.
    private static func replace(_ path: String, with bytes: [UInt8]) -> String? {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let problem = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                return problem
            }
            written += n
        }
        let synced = fsync(fd) == 0 ? 0 : errno
        let closed = close(fd) == 0 ? 0 : errno
        if synced != 0 || closed != 0 {
            unlink(temporary)
            return String(cString: strerror(synced != 0 ? synced : closed))
        }
        guard rename(temporary, path) == 0 else {
            let problem = String(cString: strerror(errno))
            unlink(temporary)
            return problem
        }
        return nil
    }
}
