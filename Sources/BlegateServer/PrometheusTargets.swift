// SPDX-License-Identifier: MIT
import BackendContract
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Prometheus's file service discovery (`file_sd_configs`) for the fleet: a target group
/// per gateway not revoked, `HOST:PORT` where HOST is the address set with `gateway
/// set-address`, else the gateway's id (gyms name their Pis by it on the LAN), labelled
/// `gateway` with its id.
public enum PrometheusTargets {
    public struct Group: Encodable, Sendable, Equatable {
        public var targets: [String]
        public var labels: [String: String]
    }

    public static func groups(_ gateways: [ServerStore.GatewayInfo], port: Int) -> [Group] {
        gateways.filter { !$0.revoked }.map { g in
            let host = g.address ?? g.id
            let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            return Group(targets: [target], labels: ["gateway": g.id])
        }
    }

    public static func json(_ groups: [Group]) -> String {
        String(decoding: ContractValue.encoded(groups), as: UTF8.self) + "\n"
    }

    public struct WriteError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Writes `text` to `path` whole or not at all: a temporary file beside it, synced, then
    /// renamed over it, so Prometheus never reads half a file.
    public static func write(_ text: String, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteError(description: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var failure: String?
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { posixWrite(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = "cannot write \(temporary): \(String(cString: strerror(errno)))"
                break
            }
            written += n
        }
        if failure == nil, fsync(fd) != 0 { failure = "cannot sync \(temporary): \(String(cString: strerror(errno)))" }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))" }
        if let failure {
            unlink(temporary)
            throw WriteError(description: failure)
        }
    }
}

/// write(2), named apart from `PrometheusTargets.write`.
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, buffer, count)
    #else
    Darwin.write(fd, buffer, count)
    #endif
}
