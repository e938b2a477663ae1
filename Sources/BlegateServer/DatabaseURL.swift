// SPDX-License-Identifier: MIT
import Logging
import NIOSSL
import PostgresNIO

/// `postgres://user:password@host:port/database`, or a unix socket as
/// `postgres://user@/database?host=/run/postgresql` (libpq's spelling), so one flag
/// (`--database-url`, `BLEGATE_DATABASE_URL`) reaches either. Over TCP, `sslmode` (and
/// `sslrootcert`) choose TLS as libpq does; a unix socket never uses TLS.
public struct DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var password: String?
    public var host: String?
    public var port: Int
    public var socketDirectory: String?
    public var database: String
    public var sslMode: SSLMode
    /// PEM file of the certificate authorities to trust (`sslrootcert`); else the system's.
    public var sslRootCert: String?

    /// libpq's `sslmode` values that PostgresNIO can honour (`allow`, plain text first, it cannot).
    public enum SSLMode: String, Sendable, Equatable, CaseIterable {
        /// Plain text.
        case disable
        /// TLS when the server offers it, else plain text; the certificate is not checked.
        /// libpq's default, and this one's.
        case prefer
        /// TLS or no connection; the certificate is not checked (it is against `sslrootcert`
        /// when one is given, as libpq does).
        case require
        /// TLS, with a certificate signed by a trusted authority, for any host name.
        case verifyCA = "verify-ca"
        /// TLS, with a trusted certificate for the host connected to.
        case verifyFull = "verify-full"
    }

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
        sslMode = .prefer
        sslRootCert = nil
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            switch kv[0] {
            case "host" where kv[1].hasPrefix("/"): socketDirectory = Self.decode(kv[1])
            case "host": host = Self.decode(kv[1])
            case "port":
                guard let p = Int(kv[1]) else { throw Invalid(description: "database URL: bad port in \(text)") }
                port = p
            case "sslmode":
                guard let mode = SSLMode(rawValue: Self.decode(kv[1])) else {
                    let known = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Invalid(description: "database URL: sslmode must be one of \(known), got \(Self.decode(kv[1]))")
                }
                sslMode = mode
            case "sslrootcert": sslRootCert = Self.decode(kv[1])
            default: continue
            }
        }
        if host == nil && socketDirectory == nil { host = "127.0.0.1" }
    }

    /// The connection without the password (a URL that means the same otherwise).
    public var description: String {
        if let socketDirectory { return "postgres://\(user)@/\(database)?host=\(socketDirectory)&port=\(port)" }
        var options: [String] = []
        if sslMode != .prefer { options.append("sslmode=\(sslMode.rawValue)") }
        if let sslRootCert { options.append("sslrootcert=\(sslRootCert)") }
        return "postgres://\(user)@\(host ?? ""):\(port)/\(database)" + (options.isEmpty ? "" : "?" + options.joined(separator: "&"))
    }

    /// What `sslMode` asks of a TCP connection: nil for plain text (`disable`, or a unix
    /// socket), else the TLS configuration and whether a server without TLS is refused.
    public var tls: (configuration: TLSConfiguration, required: Bool)? {
        guard socketDirectory == nil, sslMode != .disable else { return nil }
        var t = TLSConfiguration.makeClientConfiguration()
        if let sslRootCert { t.trustRoots = .file(sslRootCert) }
        switch sslMode {
        case .disable, .prefer: t.certificateVerification = .none
        case .require: t.certificateVerification = sslRootCert == nil ? .none : .noHostnameVerification
        case .verifyCA: t.certificateVerification = .noHostnameVerification
        case .verifyFull: t.certificateVerification = .fullVerification
        }
        return (t, sslMode != .prefer)
    }

    public var clientConfiguration: PostgresClient.Configuration {
        var c: PostgresClient.Configuration
        if let socketDirectory {
            c = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            let mode: PostgresClient.Configuration.TLS = tls.map { $0.required ? .require($0.configuration) : .prefer($0.configuration) } ?? .disable
            c = .init(host: host ?? "127.0.0.1", port: port, username: user, password: password, database: database, tls: mode)
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

extension DatabaseURL {
    /// Why the database could not be reached: the connection's own error (authentication,
    /// the TLS handshake, a refused connection), which the connection pool hides behind a
    /// minute of retries and "circuit breaker tripped".
    public struct Unreachable: Error, CustomStringConvertible {
        public var description: String
    }

    /// One connection, opened and closed, so a command can say at once why the database is
    /// out of reach (a wrong `sslrootcert`, a role peer authentication refuses, no server).
    public func probe(logger: Logger) async throws(Unreachable) {
        let configuration: PostgresConnection.Configuration
        if let socketDirectory {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            var mode = PostgresConnection.Configuration.TLS.disable
            if let tls {
                do {
                    let context = try NIOSSLContext(configuration: tls.configuration)
                    mode = tls.required ? .require(context) : .prefer(context)
                } catch {
                    throw Unreachable(description: "cannot use TLS for \(self): \(error)" + (sslRootCert.map { " (sslrootcert \($0))" } ?? ""))
                }
            }
            configuration = .init(host: host ?? "127.0.0.1", port: port, username: user, password: password, database: database, tls: mode)
        }
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
        } catch {
            throw Unreachable(description: "cannot connect to \(self): \(explained(error))")
        }
    }

    /// Where the server was looked for, as a person would name it.
    var place: String {
        socketDirectory.map { "\($0) (port \(port))" } ?? "\(host ?? "127.0.0.1"):\(port)"
    }

    /// The reason (`reason`) and what to check: the errors that read like the library's
    /// internals (a refused connection, `authMechanismRequiresPassword`, an unknown role or
    /// database) name the likely cause and the command or setting to look at.
    func explained(_ error: any Error) -> String {
        let e = error as? PSQLError
        return explanation(code: e?.code, sqlState: e?.serverInfo?[.sqlState], reason: Self.reason(error))
    }

    public func explanation(code: PSQLError.Code?, sqlState: String?, reason: String) -> String {
        let lower = reason.lowercased()
        if code == .authMechanismRequiresPassword {
            return "the server asks for a password but the database URL has none: add one (postgres://\(user):PASSWORD@host/\(database)) "
                + "or allow peer or trust authentication for \(user) in pg_hba.conf"
        }
        switch sqlState {
        case "3D000"?:
            return "\(reason) — create it (`createdb -O \(user) \(database)` as postgres) or fix the URL's database name"
        case "28P01"?:
            return "\(reason) — check the password in the database URL (`ALTER ROLE \(user) PASSWORD ...` sets one)"
        case "28000"? where lower.contains("role"):
            return "\(reason) — create the role (`createuser \(user)` as postgres) or fix the URL's user name"
        case "28000"?:
            return "\(reason) — pg_hba.conf refuses \(user) on this connection (peer authentication needs the system user "
                + "of the same name; over TCP use a password)"
        default:
            break
        }
        if lower.contains("connection refused") || lower.contains("errno: 111") {
            return "connection refused at \(place) — is PostgreSQL running? (`systemctl status postgresql`, `pg_lsclusters`)"
        }
        if socketDirectory != nil, lower.contains("no such file") || lower.contains("errno: 2)") {
            return "no PostgreSQL socket at \(place) — is PostgreSQL running, on that port? (`systemctl status postgresql`, `pg_lsclusters`)"
        }
        return reason
    }

    /// The server's message, or the underlying error, without PostgresNIO's redaction.
    static func reason(_ error: any Error) -> String {
        if let e = error as? PSQLError {
            if let message = e.serverInfo?[.message] { return message }
            if let underlying = e.underlying { return String(describing: underlying) }
            return "\(e.code)"
        }
        return String(describing: error)
    }
}
