// SPDX-License-Identifier: MIT
import Logging
import PostgresNIO

/// `postgres://user:password@host:port/database`, or a unix socket as
/// `postgres://user@/database?host=/run/postgresql` (libpq's spelling), so one flag
/// (`--database-url`, `BLEGATE_DATABASE_URL`) reaches either.
public struct DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var password: String?
    public var host: String?
    public var port: Int
    public var socketDirectory: String?
    public var database: String

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ text: String) throws {
        var rest = Substring(text)
        guard let scheme = ["postgres://", "postgresql://"].first(where: { rest.hasPrefix($0) }) else {
            throw Invalid(description: "database URL must start with postgres:// (got \(text))")
        }
        rest = rest.dropFirst(scheme.count)
        var query: Substring = ""
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        var authority = rest
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        }
        var userInfo: Substring = ""
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
        }
        if let colon = userInfo.firstIndex(of: ":") {
            user = Self.decode(userInfo[..<colon])
            password = Self.decode(userInfo[userInfo.index(after: colon)...])
        } else {
            user = Self.decode(userInfo)
            password = nil
        }
        if user.isEmpty { user = "postgres" }
        port = 5432
        host = nil
        if !hostPort.isEmpty {
            if let colon = hostPort.lastIndex(of: ":") {
                guard let p = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(p) else {
                    throw Invalid(description: "database URL: bad port in \(text)")
                }
                port = p
                host = String(hostPort[..<colon])
            } else {
                host = String(hostPort)
            }
        }
        database = Self.decode(path)
        if database.isEmpty { throw Invalid(description: "database URL names no database: \(text)") }
        socketDirectory = nil
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            switch kv[0] {
            case "host" where kv[1].hasPrefix("/"): socketDirectory = Self.decode(kv[1])
            case "host": host = Self.decode(kv[1])
            case "port":
                guard let p = Int(kv[1]) else { throw Invalid(description: "database URL: bad port in \(text)") }
                port = p
            default: continue
            }
        }
        if host == nil && socketDirectory == nil { host = "127.0.0.1" }
    }

    /// The connection without the password.
    public var description: String {
        if let socketDirectory { return "postgres://\(user)@/\(database)?host=\(socketDirectory)&port=\(port)" }
        return "postgres://\(user)@\(host ?? ""):\(port)/\(database)"
    }

    public var clientConfiguration: PostgresClient.Configuration {
        var c: PostgresClient.Configuration
        if let socketDirectory {
            c = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            c = .init(host: host ?? "127.0.0.1", port: port, username: user, password: password, database: database, tls: .disable)
        }
        c.options.maximumConnections = 16
        c.options.minimumConnections = 1
        return c
    }

    private static func decode<S: StringProtocol>(_ s: S) -> String {
        var out: [UInt8] = []
        var bytes = Array(s.utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "%"), bytes.count >= 2, let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) {
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
