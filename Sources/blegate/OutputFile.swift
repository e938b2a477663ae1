// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Buffered writes to a file descriptor (standard output or a file created mode 0600,
/// since exports hold health data), usable from the cache's reader thread.
final class OutputFile: @unchecked Sendable {
    private let fd: Int32
    private let owned: Bool
    private var buffer: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// nil or "-" = standard output.
    init(path: String?) throws {
        guard let path, path != "-" else {
            fd = 1
            owned = false
            return
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
        owned = true
    }

    func write(_ s: String) throws {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 65_536 { try drain() }
    }

    func write(bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 65_536 { try drain() }
    }

    func close() throws {
        try drain()
        if owned {
            if fsync(fd) != 0 || Glibc.close(fd) != 0 { throw Failure(description: "cannot finish writing: \(String(cString: strerror(errno)))") }
        }
    }

    private func drain() throws {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "write failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
