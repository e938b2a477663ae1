// SPDX-License-Identifier: MIT
import ArgumentParser
import BlegateServer
import Logging
import PostgresNIO
import TimeZoneFiles

@main
struct BlegateServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blegate-server",
        abstract: "The blegate backend on PostgreSQL, shared by many gateways (docs/server.md).",
        subcommands: [
            Serve.self, Migrate.self, GatewayCommand.self, MemberCommand.self, PairingCommand.self, StaffCommand.self, Stats.self,
            Retention.self, PrometheusTargetsCommand.self,
        ],
        defaultSubcommand: Serve.self
    )
}

struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"),
            help: "postgres://user:password@host:port/db (TLS: ?sslmode=disable|prefer|require|verify-ca|verify-full, &sslrootcert=FILE), or postgres://user@/db?host=/run/postgresql (default: $BLEGATE_DATABASE_URL)")
    var databaseURL: String?

    func url() throws -> DatabaseURL {
        guard let text = databaseURL ?? ProcessInfoLite.environment("BLEGATE_DATABASE_URL") else {
            throw ValidationError("no database: pass --database-url or set BLEGATE_DATABASE_URL")
        }
        do { return try DatabaseURL(text) } catch { throw ValidationError("\(error)") }
    }

    /// Runs `body` with a migrated store, then closes the connections.
    func withStore<T: Sendable>(_ body: @Sendable (ServerStore) async throws -> T) async throws -> T {
        var logger = Logger(label: "blegate-server")
        logger.logLevel = .warning
        let url = try url()
        try await url.probe(logger: logger)
        let server = BlegateServer(.init(database: url), logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await server.client.run()
                return nil
            }
            defer { group.cancelAll() }
            _ = try await server.store.migrate()
            return try await body(server.store)
        }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply migrations and serve the API and the staff page.")
    @OptionGroup var database: DatabaseOptions
    @Option(help: "host:port to listen on") var listen = "127.0.0.1:8080"
    @Option(name: .customLong("metrics-listen"),
            help: "host:port to serve Prometheus's /metrics on, a listener of its own (\"\" serves none)")
    var metricsListen = "127.0.0.1:9465"
    @Option(name: .customLong("read-database-url"),
            help: "A streaming standby of the database for the staff page, member reads and the CSV (default: $BLEGATE_READ_DATABASE_URL, else the database itself)")
    var readDatabaseURL: String?
    @Option(name: .customLong("time-zone"),
            help: "The gym's time zone for the staff page, Area/City (default: $TZ, else /etc/localtime)")
    var timeZone: String?

    func run() async throws {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("--listen must be host:port, e.g. 127.0.0.1:8080")
        }
        var metrics: BlegateServer.ListenAddress?
        if !metricsListen.isEmpty {
            guard let address = BlegateServer.ListenAddress(metricsListen) else {
                throw ValidationError("--metrics-listen must be host:port, e.g. 127.0.0.1:9465, or \"\" for none")
            }
            metrics = address
        }
        var logger = Logger(label: "blegate-server")
        logger.logLevel = ProcessInfoLite.environment("BLEGATE_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info
        let zone: TimeZoneFile
        if let timeZone {
            do { zone = try TimeZoneFile(file: timeZone) } catch { throw ValidationError("--time-zone: \(error.description)") }
        } else {
            zone = .system()
        }
        let url = try database.url()
        var readURL: DatabaseURL?
        if let text = readDatabaseURL ?? ProcessInfoLite.environment("BLEGATE_READ_DATABASE_URL"), !text.isEmpty {
            do { readURL = try DatabaseURL(text) } catch { throw ValidationError("--read-database-url: \(error)") }
        }
        // Why a database is out of reach, at once, rather than the pool's retries.
        try await url.probe(logger: logger)
        try await readURL?.probe(logger: logger)
        let server = BlegateServer(.init(host: String(listen[..<colon]), port: port, database: url, timeZone: zone, metrics: metrics,
                                         readDatabase: readURL),
                                   logger: logger)
        try await server.run()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply the schema migrations not yet applied, and exit.")
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await database.withStore { _ in }
        print("schema is up to date")
    }
}

struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway", abstract: "Gateways and their bearer tokens.",
        subcommands: [Add.self, Revoke.self, List.self, SetAddress.self])

    struct SetAddress: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-address",
            abstract: "Set the host name or IP address Prometheus scrapes a gateway at (`none`: its id, the default).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The gateway's id") var id: String
        @Argument(help: "A host name or IP address, or none") var host: String

        func run() async throws {
            let (id, address) = (self.id, host == "none" ? nil : host)
            let found: Bool
            do {
                found = try await database.withStore { try await $0.setGatewayAddress(id, address: address) }
            } catch let refused as ServerStore.AdminError {
                throw ValidationError(refused.description)
            }
            guard found else { throw ValidationError("no gateway \(id)") }
            print("\(id) is scraped at \(address ?? id)")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a gateway (or renew a revoked one) and print its token once; put it in the gateway's token_file.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The gateway's id: its `gateway.id`") var id: String

        func run() async throws {
            let id = self.id
            let token = try await database.withStore { try await $0.addGateway(id) }
            print(token)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a gateway's token: its requests are refused with 403.")
        @OptionGroup var database: DatabaseOptions
        @Argument var id: String

        func run() async throws {
            let id = self.id
            guard try await database.withStore({ try await $0.revokeGateway(id) }) else {
                throw ValidationError("no gateway \(id)")
            }
            print("revoked \(id)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each gateway's last contact, outbox depth and version.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let gateways = try await database.withStore { try await $0.gateways() }
            print("id\tstate\tlast_contact\toutbox_depth\tversion\trequests")
            for g in gateways {
                print("\(g.id)\t\(g.revoked ? "revoked" : "live")\t\(g.lastContact ?? "never seen")\t\(g.outboxDepth.map(String.init) ?? "-")\t\(g.version ?? "-")\t\(g.requests)")
            }
        }
    }
}

struct MemberCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "member", abstract: "Members: names and the profiles gateways fetch.", subcommands: [Add.self, List.self, SetProfile.self])

    /// The profile options `add` and `set` share; `none` clears a value.
    struct Profile: ParsableArguments {
        @Option(help: "Age in years, 5 to 120 (none: unknown)") var age: String?
        @Option(name: .customLong("max-hr"), help: "Maximum heart rate, 100 to 240 (none: unknown)") var maxHR: String?
        @Option(name: .customLong("resting-hr"), help: "Resting heart rate, 25 to 120, below the maximum (none: unknown)") var restingHR: String?
        @Option(name: .customLong("weight-kg"), help: "Weight in kg, 20 to 350 (none: unknown)") var weightKg: String?
        @Option(help: "female or male (none: unknown)") var sex: String?

        func changes(name: String? = nil) throws -> MemberChanges {
            var c = MemberChanges()
            do {
                if let name { try c.set("name", text: name) }
                for (field, value) in [("age", age), ("max_hr", maxHR), ("resting_hr", restingHR), ("weight_kg", weightKg), ("sex", sex)] {
                    if let value { try c.set(field, text: value) }
                }
            } catch {
                throw ValidationError("\(Self.option(error.field)): \(error.reason)")
            }
            return c
        }

        static func option(_ field: String) -> String {
            field == "name" ? "--name" : "--" + field.replacing("_", with: "-")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a member and print their client id (made up unless --client-id gives one).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The member's name, as the wall and the staff page show it") var name: String
        @Option(name: .customLong("client-id"), help: "The client id to use (default: m- and 10 random characters)") var clientID: String?
        @OptionGroup var profile: Profile

        func run() async throws {
            let (name, id) = (self.name, clientID)
            let changes = try profile.changes()
            do {
                let member = try await database.withStore { try await $0.addMember(name: name, clientID: id, changes: changes) }
                print(member.clientID)
            } catch let problem as MemberProblem {
                throw ValidationError(problem.field == "client_id" ? "--client-id: \(problem.reason)" : problem.description)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every member, tab-separated: client_id, name, age, max_hr, resting_hr, weight_kg, sex, straps (- when unknown).")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let members = try await database.withStore { try await $0.members() }
            print("client_id\tname\tage\tmax_hr\tresting_hr\tweight_kg\tsex\tstraps")
            func text(_ n: Int?) -> String { n.map(String.init) ?? "-" }
            for m in members {
                var fields: [String] = [m.clientID, m.name, text(m.age), text(m.maxHR), text(m.restingHR)]
                fields.append(m.weightKg.map { String($0) } ?? "-")
                fields.append(m.sex ?? "-")
                fields.append(m.straps.isEmpty ? "-" : m.straps.joined(separator: ","))
                print(fields.joined(separator: "\t"))
            }
        }
    }

    struct SetProfile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change a member's name or profile; `none` clears a value (--age none).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The member's client id") var clientID: String
        @Option(help: "A new name") var name: String?
        @OptionGroup var profile: Profile

        func run() async throws {
            let id = clientID
            let changes = try profile.changes(name: name)
            guard changes != MemberChanges() else {
                throw ValidationError("nothing to change: give --name, --age, --max-hr, --resting-hr, --weight-kg or --sex")
            }
            let updated: Member?
            do {
                updated = try await database.withStore { try await $0.updateMember(id, changes) }
            } catch let problem as MemberProblem {
                throw ValidationError("\(Profile.option(problem.field)): \(problem.reason)")
            }
            guard let updated else { throw ValidationError("no member \(id)") }
            print("updated \(updated.clientID) (\(updated.name))")
        }
    }
}

struct PairingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pairing", abstract: "Pairing codes.", subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a single-use pairing code for a member and print it.")
        @OptionGroup var database: DatabaseOptions
        @Option(name: .customLong("client-id"), help: "The member's client id") var clientID: String
        @Option(help: "How long the code stays valid: 90s, 30m, 24h, 7d") var expires = "24h"

        func run() async throws {
            guard let seconds = Self.seconds(expires) else { throw ValidationError("--expires: a number with s, m, h or d, e.g. 24h") }
            let client = clientID
            let made = try await database.withStore { try await $0.createPairingCode(clientID: client, validSeconds: seconds) }
            print(made.code)
            printErr("valid until \(made.expiresAt)")
        }

        static func seconds(_ text: String) -> Int? {
            guard let unit = text.last, let n = Int(text.dropLast()), n > 0 else { return nil }
            switch unit {
            case "s": return n
            case "m": return n * 60
            case "h": return n * 3600
            case "d": return n * 86400
            default: return nil
            }
        }
    }
}

struct StaffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "staff", abstract: "Staff tokens for the staff page and the read endpoints.", subcommands: [Add.self, Revoke.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create (or renew) a staff member's token and print it once.")
        @OptionGroup var database: DatabaseOptions
        @Argument var name: String

        func run() async throws {
            let name = self.name
            print(try await database.withStore { try await $0.addStaff(name) })
        }
    }

    struct Revoke: AsyncParsableCommand {
        @OptionGroup var database: DatabaseOptions
        @Argument var name: String

        func run() async throws {
            let name = self.name
            guard try await database.withStore({ try await $0.revokeStaff(name) }) else { throw ValidationError("no staff \(name)") }
            print("revoked \(name)")
        }
    }
}

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Row counts per table, as JSON (tests and the benchmark).")
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let counts = try await database.withStore { try await $0.counts() }
        print("{" + counts.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}")
    }
}

struct Retention: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drop the month partitions of records older than what is kept (from cron or a timer).",
        discussion: """
            Keeps the current UTC month and the --record-months whole months before it of records, \
            with their seconds' claims, which live in the same rows. Prints each partition dropped.
            """)
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Whole months of records to keep before the current one.") var recordMonths = 13
    /// Accepted so existing timers keep working: claims go with their records' months.
    @Option(help: ArgumentHelp("Ignored: second claims go with their records.", visibility: .hidden)) var claimMonths = 1

    func validate() throws {
        guard recordMonths >= 0, claimMonths >= 0 else { throw ValidationError("months to keep must not be negative") }
    }

    func run() async throws {
        let records = recordMonths
        let dropped = try await database.withStore { try await $0.applyRetention(recordMonths: records) }
        for p in dropped { print("dropped \(p.name)") }
        if dropped.isEmpty { print("nothing to drop") }
    }
}

struct PrometheusTargetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prometheus-targets",
        abstract: "Write Prometheus's file_sd targets: each gateway not revoked at its address (else its id) and --port.",
        discussion: """
            One target group per gateway, labelled gateway=ID. The file is written whole to a \
            temporary file and renamed over FILE, so Prometheus never reads half of it; run it \
            from cron or a timer to follow gateways added and revoked.
            """)
    @OptionGroup var database: DatabaseOptions
    @Option(help: "The file to write (a file_sd_configs file)") var output: String
    @Option(help: "The gateways' metrics port ([metrics] listen)") var port = 9464

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1 to 65535") }
        guard !output.isEmpty else { throw ValidationError("--output: a file name") }
    }

    func run() async throws {
        let gateways = try await database.withStore { try await $0.gateways() }
        let groups = PrometheusTargets.groups(gateways, port: port)
        try PrometheusTargets.write(PrometheusTargets.json(groups), to: output)
        print("wrote \(groups.count) target\(groups.count == 1 ? "" : "s") to \(output)")
    }
}
