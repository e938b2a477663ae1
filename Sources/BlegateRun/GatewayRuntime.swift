// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Cache
import Classes
import CoachPage
import Config
import DBus
import SystemPackage
import SystemSupport
import StrapLinks
import PrintableText
import Logging
import MetricsExposition
import NIOPosix
import ServiceLifecycle
import Sync
import Synchronization
import WearMetrics
import Timing
import Wall

/// Observers for benchmarks and tests; the service itself needs none.
public struct RuntimeHooks: Sendable {
    /// Every record appended to the cache, with its outbox sequence.
    public var onAppend: CacheRecordSink.AppendObserver?
    /// Every group commit.
    public var onCommit: (@Sendable (CommitEvent) -> Void)?

    public init(onAppend: CacheRecordSink.AppendObserver? = nil, onCommit: (@Sendable (CommitEvent) -> Void)? = nil) {
        self.onAppend = onAppend
        self.onCommit = onCommit
    }
}

/// `blegate run`: straps → cache → backend, as one swift-service-lifecycle group.
///
/// Services, in the order they stop on SIGTERM/SIGINT: Bluetooth (notifications
/// released, straps disconnected, cache flushed), device facts (last registry write),
/// retention, status socket, sync (one last pass for at most 10 s), saved state. What
/// sync could not deliver stays in the cache for the next start.
public final class GatewayRuntime: Sendable {
    public let configuration: GatewayConfiguration
    public let cache: RecordCache
    public let startedAt: UTCTimestamp
    let sync: SyncEngine?
    let client: BackendClient?
    let bluetooth: BluetoothService
    let status: StatusServer
    let errors: ErrorLog
    let facts: DeviceFacts
    let paired: PairedDevices
    let wall: WallHookup?
    let classes: ClassKeeper
    let members: MemberDirectory
    /// Records committed by kind and their commit latency, for `status` and `/metrics`.
    let tally: CommitTally
    /// nil with `[metrics] listen = ""`.
    let metrics: GatewayMetrics?
    let logger: Logger
    /// The one event loop thread of `blegate run`'s NIO parts (the wall's server and the
    /// backend client's connection): each part with a group of its own, or NIO's singleton
    /// sized by core count, would add threads, each with a stack.
    public let eventLoops: MultiThreadedEventLoopGroup
    private let group = Mutex<ServiceGroup?>(nil)
    private let shutdownRequested = Atomic<Bool>(false)

    /// Sync's last pass on SIGTERM: with bluetooth's release (`StrapManager.releaseDeadline`)
    /// and the cache's last commit, the gateway is gone within 5 s, well inside systemd's
    /// `TimeoutStopSec`, however slow bluetoothd or the backend. What the pass does not
    /// deliver is sent after the next start.
    static let syncDrainTimeout = Duration.milliseconds(1500)

    /// The cache's group commit interval in `blegate run`: a notification is on the device
    /// within this (plus one transaction), and a power cut loses at most this much. One
    /// commit a second gathers every strap's records into a few pages; commits every few
    /// milliseconds wrote each record's pages on their own and wore an SD card out in
    /// months (docs/cache.md, "Writes and card life").
    public static let defaultCommitInterval = Duration.seconds(1)

    /// Opens the cache and binds the status socket; nothing runs until `run()`.
    public init(configuration c: GatewayConfiguration, bus: DBusBusAddress, logger: Logger,
                commitInterval: Duration = GatewayRuntime.defaultCommitInterval,
                hooks: RuntimeHooks = RuntimeHooks()) throws(RuntimeError) {
        self.configuration = c
        self.logger = logger
        self.startedAt = .now
        let key: [UInt8]?
        let coachPIN: String?
        do {
            key = try c.loadEncryptionKey()
            coachPIN = try c.loadCoachPIN()
        } catch {
            throw RuntimeError(.configuration, error.description)
        }
        let cache: RecordCache
        do {
            var options = CacheOptions(configuration: c, encryptionKey: key, create: true)
            options.groupCommitInterval = commitInterval
            cache = try RecordCache(path: c.cacheFilePath, options: options)
        } catch {
            throw RuntimeError(.cache, error.description)
        }
        self.cache = cache
        let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.eventLoops = eventLoops

        var client: BackendClient?
        var sync: SyncEngine?
        var startWarnings: [String] = []
        if let url = c.backend.url {
            if let warning = Self.plainTextTokenWarning(url: url, tokenFile: c.backend.tokenFile) {
                startWarnings.append(warning)
                logger.warning("\(warning)")
            }
            let token = c.backend.tokenFile.map { TokenStore(file: $0) } ?? TokenStore(token: nil)
            do {
                client = try BackendClient(baseURL: url, token: token, samplesPath: c.backend.samplesPath, eventLoopGroup: eventLoops)
            } catch {
                eventLoops.shutdownGracefully { _ in }
                throw RuntimeError(.configuration, "config error: " + error.message)
            }
            var syncLogger = logger
            syncLogger[metadataKey: "component"] = "sync"
            sync = SyncEngine(outbox: cache, documents: cache, client: client!,
                              configuration: SyncConfiguration(gatewayID: c.gateway.id, sink: c.backend.sink == .samples ? .samples : .wearmetrics,
                                                               batchSize: c.backend.batchSize, interval: c.backend.interval,
                                                               drainTimeout: Self.syncDrainTimeout),
                              logger: syncLogger)
        }
        self.client = client
        self.sync = sync

        let errors = ErrorLog()
        for warning in startWarnings { errors.add(.config, warning) }
        let facts = DeviceFacts()
        self.errors = errors
        self.facts = facts
        let metrics = c.metrics.listen == nil ? nil : GatewayMetrics(version: BlegateVersion.current, startedAt: startedAt)
        self.metrics = metrics
        let tally = CommitTally(metrics: metrics?.factory)
        self.tally = tally
        let onAppend = hooks.onAppend
        let cacheSink = CacheRecordSink(cache: cache, facts: facts, observer: { record, kind, sequence in
            tally.appended(record, kind: kind, sequence: sequence)
            onAppend?(record, kind, sequence)
        })
        let members = MemberDirectory(client: client, cache: cache, configured: c.members, logger: logger)
        self.members = members
        let coachRoutes = DeferredRoutes(off: coachPIN == nil)
        let wall = WallHookup(configuration: c, cache: cache, errors: errors, group: eventLoops, routes: coachRoutes, logger: logger)
        if let board = wall?.board {
            members.onChange {
                let view = members.wallView()
                board.setServerMembers(view.members, straps: view.straps)
            }
        }
        self.wall = wall
        var classLogger = logger
        classLogger[metadataKey: "component"] = "classes"
        let classes = ClassKeeper(
            settings: ClassKeeper.Settings(gatewayID: c.gateway.id, schedule: c.classes,
                                           idleCloseMs: c.workouts.idleClose.milliseconds,
                                           minDurationMs: c.workouts.minDuration.milliseconds,
                                           openGymType: c.workouts.openGymType),
            cache: cache, workouts: WorkoutAssembler(configuration: c, cache: cache, serverProfiles: { members.profiles() }), logger: classLogger,
            onChange: { current, _ in wall?.classChanged(current) },
            onSummary: { session, workouts in wall?.classEnded(session, workouts) })
        self.classes = classes
        let recordSink: any RecordSink = wall.map { WallRecordSink(cacheSink, board: $0.board) } ?? cacheSink
        let sink = ClassRecordSink(recordSink, classes: classes)
        var btLogger = logger
        btLogger[metadataKey: "component"] = "bluetooth"
        let paired = PairedDevices()
        self.paired = paired
        var links = LinkConfiguration(configuration: c)
        links.isPaired = { paired.contains($0) }
        let limitsLogger = btLogger
        links.limitMemory = LinkLimitFile(path: FilePath(c.gateway.stateDirectory).appending("link-limits.json").string) { message in
            errors.add(.storage, "cannot save learned link limits", detail: message)
            limitsLogger.warning("\(message)")
        }
        let bluetooth = BluetoothService(bus: bus, configuration: links, sink: sink, cache: cache,
                                         errors: errors, facts: facts, logger: btLogger)
        self.bluetooth = bluetooth
        wall?.service.broadcaster.onWatchedChange { watched in
            bluetooth.setGather(watched ? LinkConfiguration.watchedNotifyGather : LinkConfiguration.unwatchedNotifyGather)
        }
        if let pin = coachPIN, let board = wall?.board {
            var coachLogger = logger
            coachLogger[metadataKey: "component"] = "coach"
            coachRoutes.set(CoachRoutes(guardian: CoachGuard(pin: pin), actions: GatewayCoach(
                configuration: c, classes: classes, bluetooth: bluetooth, cache: cache, client: client, sync: sync,
                directory: members, paired: paired, board: board, logger: coachLogger)))
        }

        let socketPath = c.status.socket
        let dir = FilePath(socketPath).removingLastComponent().string
        if !dir.isEmpty { FilePaths.makeDirectories(dir, mode: 0o755, exactMode: true) }
        let handler = Handler()
        do {
            status = try StatusServer(path: socketPath, eventLoop: eventLoops.next(), logger: logger) { request, peer in await handler.handle(request, peer) }
        } catch {
            eventLoops.shutdownGracefully { _ in }
            throw RuntimeError(.statusSocket, error.description)
        }

        // Wake sync once a batch worth of records is committed, instead of waiting out the
        // interval; smaller amounts go at the next interval.
        let committed = CommitCounter()
        let batch = c.backend.batchSize
        let onCommit = hooks.onCommit
        let engine = sync
        cache.onCommit { event in
            tally.committed(event)
            onCommit?(event)
            guard let sync = engine else { return }
            if committed.value.add(event.count, ordering: .relaxed).newValue >= batch {
                committed.value.store(0, ordering: .relaxed)
                Task { await sync.wake() }
            }
        }
        handler.runtime.withLock { $0 = WeakRuntime(self) }
    }

    /// Runs until SIGTERM/SIGINT (with `signals`) or `shutdown()`, then stops every part
    /// in order and closes the cache. Returns normally after a graceful stop.
    public func run(signals: Bool = true) async throws {
        let cache = self.cache, errors = self.errors, facts = self.facts, logger = self.logger
        if let text = try? await cache.loadMetaText(key: SavedServiceState.key),
           let saved = try? StatusReport.decoder.decode(SavedServiceState.self, from: Data(text.utf8)) {
            errors.restore(saved.errors)
        }
        if let devices = try? await cache.devices() {
            paired.set(devices.filter { $0.member != nil }.map(\.address))
        }
        await classes.restore()
        // Scale readings whose profile metrics a crash kept from the document outbox.
        await ProfileMetricFeeder(cache: cache, logger: logger).recover()
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        func add(_ service: any Service, _ name: String) {
            services.append(.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                                  failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: name))
        }
        if let sync { add(sync, "sync") }
        add(status, "status")
        add(PeriodicTask("retention", every: .seconds(3600), immediately: true, body: {
            do {
                let report = try await cache.prune()
                if report.deleted > 0 {
                    logger.info("retention deleted records", metadata: ["by_age": "\(report.deletedByAge)", "by_size": "\(report.deletedBySize)",
                                                                        "unsynced": "\(report.deletedUnsynced)"])
                }
                if report.overLimitWithUnsynced {
                    errors.add(.storage, "cache is above cache.max_size and only unsynced records are left", detail: "\(report.bytesAfter) bytes in use")
                }
            } catch {
                errors.add(.storage, "retention failed", detail: "\(error)")
                logger.error("retention failed", metadata: ["error": "\(error)"])
            }
        }), "retention")
        let writeFacts: @Sendable () async -> Void = {
            do {
                try await facts.write(to: cache)
            } catch {
                errors.add(.storage, "cannot update the device registry", detail: "\(error)")
            }
        }
        let watch = CacheWriteWatch(cache: cache, errors: errors, logger: logger)
        add(bluetooth, "bluetooth")
        let classes = self.classes
        // First in the group, so stopped last: the final saves (classes, registry, state)
        // see everything the other services did up to their end. `memory` hands freed heap
        // pages back once a minute, so the resident size follows what is in use and does
        // not creep (MallocTuning in ProcessTuning).
        add(ChoreWheel([
            .init("classes", every: 1, immediately: true, body: { await classes.tick() },
                  finally: { await classes.saveIfChanged() }, next: { classes.nextTick() }),
            .init("cache-health", every: 2, body: { watch.check() }),
            .init("devices", every: 5, body: writeFacts, finally: writeFacts),
            .init("classes-state", every: 5, body: { await classes.saveIfChanged() }),
            .init("state", every: 10, body: { await self.saveState() }, finally: { await self.saveState() }),
            .init("memory", every: 60, body: { MallocTuning.trim() }),
        ]), "chores")
        services.insert(services.removeLast(), at: 0)
        let members = self.members
        if client != nil {
            add(PeriodicTask("members", every: MemberDirectory.refresh, immediately: true, body: { await members.refresh() }), "members")
        }
        if let wall {
            add(wall.service, "wall")
            add(wall.directory, "wall-directory")
            let board = wall.board, bluetooth = self.bluetooth
            add(PeriodicTask("wall-waiting", every: .seconds(2), immediately: true, body: {
                board.updateWaiting(bluetooth.links.filter { WallHookup.waitingStates.contains($0.state) }.map {
                    WallWaitingStrap(address: $0.address, reason: $0.reason ?? "waiting for a link")
                })
            }), "wall-waiting")
        }
        if let metrics, let listen = configuration.metrics.listen {
            add(MetricsListener(registry: metrics.registry, host: listen.host, port: listen.port, logger: logger,
                                retryEvery: WallService.retryInterval, onFailure: { errors.add(.config, $0) },
                                refresh: { [weak self] in
                                    guard let report = try? await self?.statusReport(countingRecords: false) else { return }
                                    metrics.update(from: report)
                                }), "metrics")
        }
        let notifier = SystemdNotifier()
        if let interval = notifier.watchdogInterval {
            let bluetooth = self.bluetooth, status = self.status, cache = self.cache
            add(Watchdog(notifier: notifier, interval: interval, probes: [
                Watchdog.Probe(name: "status socket", check: { within in status.answers(within: within) }),
                Watchdog.Probe(name: "D-Bus dispatcher", check: { within in await bluetooth.answers(within: within) }),
                Watchdog.Probe(name: "cache writer", problem: { within in cache.writerStall(within: within) }),
                Watchdog.Probe(name: "notify reader", problem: { within in bluetooth.notifyReaderStall(within: within) }),
            ], logger: logger), "watchdog")
        }

        var groupLogger = logger
        groupLogger.logLevel = max(logger.logLevel, .notice)
        let g = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: signals ? [.sigterm, .sigint] : [], logger: groupLogger))
        group.withLock { $0 = g }
        if shutdownRequested.load(ordering: .relaxed) { await g.triggerGracefulShutdown() }

        notifier.notify("READY=1")
        logger.notice("ready: gateway \(configuration.gateway.id), cache \(cache.path), backend \(configuration.backend.url.map(PrintableText.redactingCredentials) ?? "none (cache only)"), status socket \(status.path)")
        var failure: (any Error)?
        do {
            try await g.run()
            notifier.notify("STOPPING=1")
        } catch {
            failure = error
            logger.error("gateway stopped on an error", metadata: ["error": "\(error)"])
        }
        do {
            try await cache.close()
        } catch {
            logger.error("cannot commit the last records to the cache", metadata: ["error": "\(error)"])
            failure = failure ?? error
        }
        try? await client?.shutdown()
        if let failure { throw failure }
        logger.notice("stopped")
    }

    deinit {
        eventLoops.shutdownGracefully { _ in }
    }

    /// Starts the graceful stop (as SIGTERM does).
    public func shutdown() async {
        shutdownRequested.store(true, ordering: .relaxed)
        if let g = group.withLock({ $0 }) { await g.triggerGracefulShutdown() }
    }

    /// The live status. `countingRecords: false` (each scrape of `/metrics`) reads the
    /// outbox alone and leaves the cache's record totals at 0, sparing a scan of the cache.
    public func statusReport(countingRecords: Bool = true) async throws -> StatusReport {
        let stats = try await countingRecords ? cache.stats() : cache.outboxStats()
        var report = StatusReport(source: "service", gatewayID: configuration.gateway.id, generatedAt: UTCTimestamp.now.iso8601,
                                  cacheFile: cache.path, outbox: StatusReport.outbox(stats))
        try await report.outbox.addDocuments(from: cache)
        report.startedAt = startedAt.iso8601
        let health = cache.writeHealth
        report.outbox.writeProblem = health.summary
        report.outbox.dropped = health.dropped
        report.outbox.prunedForSpace = health.prunedForSpace
        let registry = Dictionary(try await cache.devices().map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        report.devices = bluetooth.links.map { StatusReport.device($0, registry: registry[$0.address]) }
        report.adapterRecoveries = bluetooth.adapterRecoveries
        report.adapters = bluetooth.adapterLinks.map(StatusReport.adapter)
        report.notifyWindowMilliseconds = Int(bluetooth.notifyGather.nanoseconds / 1_000_000)
        report.currentClass = classes.current.map(ClassReport.init)
        let syncStatus = await sync?.status
        report.sync = syncStatus.map(StatusReport.sync)
        report.errors = ErrorLog.merged(errors.all, sync: syncStatus?.lastErrors ?? [])
        report.totals = StatusReport.totals(bluetooth.totals, committed: tally.committedByKind)
        if let fs = FilePaths.fileSystem(cache.path) {
            report.outbox.filesystemFreeBytes = Int64(clamping: fs.free)
            report.outbox.filesystemSizeBytes = Int64(clamping: fs.size)
        }
        return report
    }

    /// Keeps the last sync and errors in the cache for `blegate status` while stopped.
    func saveState() async {
        let syncStatus = await sync?.status
        let state = SavedServiceState(startedAt: startedAt.iso8601, savedAt: UTCTimestamp.now.iso8601,
                                      sync: syncStatus.map(StatusReport.sync),
                                      errors: ErrorLog.merged(errors.all, sync: syncStatus?.lastErrors ?? []))
        do {
            try await cache.saveMetaText(key: SavedServiceState.key, StatusReport.text(state))
        } catch {
            errors.add(.storage, "cannot save the gateway state in the cache", detail: "\(error)")
        }
    }

    func answer(_ request: StatusRequest, from peer: StatusPeer) async -> String {
        if request.changesTheGateway, !peer.mayChange {
            logger.warning("status socket: a change refused to an unprivileged client", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            return StatusAnswer.failure("only root or the gateway's own user may pair straps or run classes; uid \(peer.uid) may only read the status (run the command with sudo)",
                                        code: "forbidden").line
        }
        switch request {
        case .status:
            do {
                return try await statusReport().json()
            } catch {
                return StatusAnswer.failure("cannot read the cache: \(error)").line
            }
        case let .pair(address, clientID):
            let address = address.uppercased()
            do {
                let assigned = try await cache.pair(address: address, clientID: clientID)
                paired.insert(address)
                // No member id in the log: the address is enough to find the pairing.
                logger.notice("device paired", metadata: ["device": "\(address)", "pending_records_assigned": "\(assigned)"])
                await sync?.wake()
                return StatusAnswer(ok: true, assigned: assigned).line
            } catch {
                errors.add(.storage, "cannot store the pairing of \(address)", detail: "\(error)")
                return StatusAnswer.failure("cannot store the pairing in the cache: \(error)").line
            }
        case .classShow:
            return StatusAnswer(aboutClass: true, classReport: classes.current.map(ClassReport.init)).line
        case let .classStart(name, type):
            guard let kind = ClassType(rawValue: type) else {
                return StatusAnswer.failure("unknown class type \"\(type)\"; one of " + ClassType.allCases.map(\.rawValue).joined(separator: ", "),
                                            code: "bad_type").line
            }
            do {
                let session = try await classes.start(name: name, type: kind)
                return StatusAnswer(ok: true, classReport: ClassReport(session)).line
            } catch {
                return StatusAnswer.failure(error.description, code: error.code.rawValue).line
            }
        case .classStop:
            do {
                let session = try await classes.stop()
                return StatusAnswer(ok: true, classReport: ClassReport(session)).line
            } catch {
                return StatusAnswer.failure(error.description, code: error.code.rawValue).line
            }
        }
    }

    /// A bearer token sent over plain HTTP to another host can be read by anyone on the
    /// gym's network: said at start, in the journal and in `status` (the gateway still
    /// runs: a backend on the gym's own network may be reachable no other way). Loopback
    /// (`localhost`, 127.0.0.0/8, `::1`) never leaves the machine; https is encrypted.
    static func plainTextTokenWarning(url: String, tokenFile: String?) -> String? {
        guard tokenFile != nil, url.lowercased().hasPrefix("http://") else { return nil }
        let authority = url.dropFirst("http://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let host = hostPort.hasPrefix("[") ? String(hostPort.dropFirst().prefix { $0 != "]" }) : String(hostPort.split(separator: ":").first ?? "")
        guard !isLoopback(host) else { return nil }
        return "backend.url is plain http:// to \(PrintableText.clean(host, limit: 100)): the bearer token travels unencrypted; use https://"
    }

    /// `localhost`, an IPv4 address in 127.0.0.0/8 (all four parts numbers: `127.0.0.1.example`
    /// is a name anyone may own) or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "localhost." || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        var octets: [Int] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (48...57).contains($0) }), let v = Int(part), v <= 255 else { return false }
            octets.append(v)
        }
        return octets[0] == 127
    }

    /// The status server is made before `self` exists; it reaches the runtime through this.
    private final class Handler: Sendable {
        let runtime = Mutex<WeakRuntime?>(nil)

        func handle(_ request: StatusRequest, _ peer: StatusPeer) async -> String {
            guard let r = runtime.withLock({ $0?.runtime }) else { return StatusAnswer.failure("the gateway is stopping").line }
            return await r.answer(request, from: peer)
        }
    }

    private struct WeakRuntime: @unchecked Sendable {
        weak var runtime: GatewayRuntime?
        init(_ runtime: GatewayRuntime) { self.runtime = runtime }
    }
}

/// Records committed since sync was last woken.
private final class CommitCounter: Sendable {
    let value = Atomic<Int>(0)
}
