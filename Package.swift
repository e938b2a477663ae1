// swift-tools-version: 6.1
import PackageDescription

// The layers read bottom-up: C shims (CDBus, CBluetooth, CLinux, CTimex) are
// imported only by DBus, SystemSupport, HCI, NotifySocket, Doctor; everything
// above them is pure Swift and testable without a bus. Then the pure layers (GATT, HRV,
// WearMetrics, Normalization, LinkPolicy, Effort, Classes), the strap links (StrapLinks),
// the cache and sync (Cache, Outbox, BackendContract, Sync), and the commands: `blegate
// run` (BlegateRun, Wall), scan and stream (ScanStreamCommands), blegate-server.
let package = Package(
    name: "blegate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blegate", targets: ["blegate"]),
        .executable(name: "blegate-stream", targets: ["blegate-stream"]),
        .executable(name: "blegate-server", targets: ["blegate-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Hummingbird's own HTTP types; the test backend names header fields with them.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C edge.
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CBluetooth",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        // Header-only wrappers of Linux calls Swift cannot make directly (eventfd, epoll,
        // recvmmsg, posix_spawn's closefrom), apart from libdbus as swift-nio keeps CNIOLinux.
        .systemLibrary(name: "CLinux"),
        // <sys/timex.h> (adjtimex) for the doctor's clock check; header-only like CBluetooth.
        .systemLibrary(name: "CTimex"),
        // Clocks, Duration in seconds and milliseconds, exponential backoff and the seeded
        // generator: the one copy of each, below every other Swift target.
        .target(name: "Timing"),
        // What the long-running processes need of Linux beyond the standard library: named
        // threads for loops that block (dispatcher, notify reader, cache writer), child
        // processes started with only the descriptors handed over (posix_spawn over CLinux),
        // malloc arena limits and trimming, and mkdir -p / sizes on POSIX calls.
        .target(name: "SystemSupport", dependencies: ["CLinux", .product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "DBus", dependencies: ["CDBus", "CLinux", "SystemSupport", "Timing", "PrintableText"]),
        .target(name: "HCI", dependencies: ["CBluetooth"]),
        // The AcquireNotify sockets of every strap, read on one epoll thread.
        .target(name: "NotifySocket", dependencies: ["CLinux", "DBus", "SystemSupport", "Timing"]),

        // Pure Swift.
        // Decoders for every characteristic a gym meets, Encodable for `blegate decode`.
        .target(name: "GATT", dependencies: ["PrintableText"]),
        .target(name: "HRV"),
        // The Synheart WearMetrics record: fields, validation, its JSON writer and Codable form.
        .target(name: "WearMetrics", dependencies: ["Timing"]),
        // Decoded characteristics and HRV reports → WearMetrics records.
        .target(name: "Normalization", dependencies: ["GATT", "HRV", "WearMetrics"]),
        .target(name: "Simulator", dependencies: ["DBus", "Timing"]),
        // Outside text (device names, backend messages) made safe to print.
        .target(name: "PrintableText"),
        .target(name: "BlueZ", dependencies: ["DBus", "PrintableText"]),
        // The cache-to-sync contract, so neither side depends on the other.
        .target(name: "Outbox", dependencies: ["WearMetrics"]),
        // The backend contract's checks of ids, times and every item a gateway sends
        // (docs/backend-openapi.yaml): both backends judge with them.
        .target(name: "BackendContract", dependencies: ["WearMetrics"]),
        // Reconnect pacing, slots and device selection: pure policy, no bus.
        .target(name: "LinkPolicy", dependencies: ["Timing", "PrintableText"]),
        // The strap links: the BlueZ client that finds straps, keeps them connected across
        // adapters within each one's learned link limit and turns notifications into
        // records (used by `blegate stream` and `blegate run`).
        .target(
            name: "StrapLinks",
            dependencies: ["DBus", "NotifySocket", "BlueZ", "GATT", "HRV", "WearMetrics", "Normalization", "LinkPolicy", "Timing"]
        ),
        // `blegate doctor`'s checks (bluetoothd and its D-Bus policy, adapters, rfkill,
        // main.conf, Raspberry Pi radio, backend, clock, disk) and the report they make.
        .target(
            name: "Doctor",
            dependencies: [
                // Sync: the probe goes through the gateway's own backend client set-up.
                "CTimex", "DBus", "BlueZ", "HCI", "SystemSupport", "Sync",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The gateway's TOML configuration, validated into a typed tree.
        .target(name: "Config", dependencies: ["Classes", "Timing", .product(name: "TOMLKit", package: "TOMLKit")]),
        // Durable record cache (SQLite through GRDB, the system's libsqlite3): the outbox the
        // sync engine drains, and the device registry.
        .target(
            name: "Cache",
            dependencies: [
                "WearMetrics", "Outbox", "SystemSupport", "Timing",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            // A file uses only what it imports.
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        ),
        // Delivers outbox records to the HTTP backend (docs/sync.md, docs/backend-openapi.yaml),
        // over AsyncHTTPClient (keep-alive pool, deadlines, NIOSSL for https).
        .target(
            name: "Sync",
            dependencies: [
                "Outbox", "BackendContract", "WearMetrics", "PrintableText", "Timing",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The HTTP listener both backends start the same way (the test backend, blegate-server).
        .target(
            name: "HTTPListening",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // `/metrics` for Prometheus on a listener of its own, for `blegate run` and blegate-server.
        .target(
            name: "MetricsExposition",
            dependencies: [
                "HTTPListening",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A loopback implementation of the backend contract with fault injection, for tests.
        .target(
            name: "TestBackend",
            dependencies: [
                "Outbox", "BackendContract", "WearMetrics", "Timing", "HTTPListening",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Time zones from tzdata's files and POSIX TZ rules: local days without ICU.
        .target(name: "TimeZoneFiles", dependencies: ["Timing"]),
        // Classes by schedule, by hand and open gym: which window each workout covers.
        .target(name: "Classes", dependencies: ["Timing", "TimeZoneFiles"]),
        // Max HR, zones, kcal and effort points: pure maths for the wall and workouts.
        .target(name: "Effort"),
        // A class's summary as the wall, the coach page and the staff page show it: the
        // zone-coloured heart-rate curve (SVG) and times in zones.
        .target(name: "ClassSummary", dependencies: ["Effort", "PrintableText"]),
        // A member's workout in a class from their strap's records, its JSON, FIT and TCX: pure maths.
        .target(name: "Workouts", dependencies: ["Classes", "Effort", "WearMetrics", "HRV"]),
        // The wall: a live page of every member's heart rate, served by `blegate run`.
        .target(
            name: "Wall",
            dependencies: [
                "Effort", "ClassSummary", "WearMetrics", "Timing",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The coach page on the wall's listener: PIN sign-in, sessions, forgery checks, and
        // the page that runs a class from a tablet over `CoachActions`.
        .target(name: "CoachPage", dependencies: ["Wall", "PrintableText", "Timing"]),
        // `blegate run`: straps → cache → backend as one service group, the wall, classes,
        // the status socket.
        .target(
            name: "BlegateRun",
            dependencies: [
                "StrapLinks", "Cache", "Config", "Sync", "DBus", "HCI", "LinkPolicy", "HRV", "WearMetrics", "Wall", "CoachPage", "ClassSummary", "Effort", "Classes", "Outbox", "Workouts", "PrintableText", "SystemSupport", "Timing",
                "MetricsExposition",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "blegate-test-backend",
            dependencies: [
                "TestBackend",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // The production backend: the contract on PostgreSQL, shared by many gateways (docs/server.md).
        .target(
            name: "BlegateServer",
            dependencies: [
                "Outbox", "BackendContract", "HTTPListening", "MetricsExposition", "ClassSummary", "Effort", "PrintableText", "TimeZoneFiles", "Timing",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "blegate-server",
            dependencies: [
                "BlegateServer", "TimeZoneFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),

        // `blegate scan` and `blegate stream`: discovery and following straps from the command line.
        .target(
            name: "ScanStreamCommands",
            dependencies: [
                "DBus", "BlueZ", "GATT", "HRV", "WearMetrics", "StrapLinks", "LinkPolicy", "HCI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // scan and stream alone, without SQLite, HTTP, TLS or the rest of `run`: `blegate`
        // execs it for those two commands, since in the whole binary a stream misses its
        // memory budget (the figures are in Sources/blegate-stream).
        .executableTarget(
            name: "blegate-stream",
            dependencies: [
                "ScanStreamCommands", "SystemSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "blegate",
            dependencies: [
                "ScanStreamCommands", "DBus", "GATT", "HRV", "WearMetrics", "Simulator", "StrapLinks", "LinkPolicy",
                "Doctor", "Config", "Cache", "BlegateRun", "Sync", "SystemSupport", "Classes", "Workouts", "Timing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "blegate-bench",
            dependencies: [
                "DBus", "Simulator", "GATT", "HRV", "WearMetrics", "Normalization", "Cache", "Outbox", "Sync", "TestBackend",
                "BlegateRun", "StrapLinks", "Config", "SystemSupport", "Timing", "BackendContract", "BlegateServer",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/blegate-bench"
        ),

        // Shared by the test targets: running the real binary, background processes.
        .target(
            name: "BlegateTestSupport",
            dependencies: ["Simulator", "DBus", "GATT", "WearMetrics", "Normalization", "SystemSupport", "Timing"],
            path: "Tests/Support"
        ),

        .testTarget(name: "DBusTests", dependencies: ["DBus", "Timing", "BlegateTestSupport"]),
        .testTarget(name: "SystemSupportTests", dependencies: ["SystemSupport"]),
        .testTarget(name: "NotifySocketTests", dependencies: ["NotifySocket", "DBus", "BlegateTestSupport", "Timing"]),
        .testTarget(name: "HCITests", dependencies: ["HCI"]),
        .testTarget(name: "GATTTests", dependencies: ["GATT", "Timing"]),
        .testTarget(name: "HRVTests", dependencies: ["HRV", "Timing"], resources: [.copy("Fixtures")]),
        .testTarget(name: "WearMetricsTests", dependencies: ["WearMetrics", "Normalization", "GATT", "HRV"]),
        .testTarget(name: "SimulatorTests", dependencies: ["Simulator", "DBus", "BlegateTestSupport", "Timing"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "Simulator", "DBus", "BlegateTestSupport"]),
        .testTarget(name: "LinkPolicyTests", dependencies: ["LinkPolicy", "Timing"]),
        .testTarget(
            name: "ScanStreamCommandsTests",
            dependencies: ["ScanStreamCommands", "DBus", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(
            name: "StrapLinksTests",
            dependencies: ["StrapLinks", "Simulator", "DBus", "BlueZ", "GATT", "WearMetrics", "LinkPolicy", "BlegateTestSupport", "HRV"]
        ),
        .testTarget(name: "DoctorTests", dependencies: ["Doctor", "HCI", "Simulator", "DBus", "BlegateTestSupport"]),
        // The systemd unit, udev rules and install.sh, checked with the system's own tools.
        .testTarget(name: "DeploymentTests", dependencies: ["BlegateTestSupport"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "Classes"]),
        .testTarget(name: "EffortTests", dependencies: ["Effort"]),
        .testTarget(name: "ClassSummaryTests", dependencies: ["ClassSummary", "Effort"]),
        .testTarget(name: "CoachPageTests", dependencies: ["CoachPage", "Wall"]),
        .testTarget(name: "ClassesTests", dependencies: ["Classes"]),
        .testTarget(name: "PrintableTextTests", dependencies: ["PrintableText"]),
        // Workouts against hand-computed fixtures; the exports checked by Garmin's FIT SDK and xmllint.
        .testTarget(name: "WorkoutsTests", dependencies: ["Workouts", "Effort", "WearMetrics"]),
        // The wall in headless Chromium against the simulator, and its board without a browser.
        .testTarget(
            name: "WallTests",
            dependencies: [
                "Wall", "ClassSummary", "Effort", "WearMetrics", "TestBackend", "BlegateTestSupport", "Simulator", "DBus",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["wall_browser.py"]
        ),
        .testTarget(
            name: "CacheTests",
            dependencies: [
                "Cache", "Config", "Outbox", "WearMetrics", "GATT", "BlegateTestSupport", "Timing", "Sync", "TestBackend", "BackendContract",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            // Caches written by earlier releases, opened from the source tree.
            exclude: ["Fixtures"]
        ),
        // blegate-server against a real PostgreSQL the suite starts itself (Tests/ServerTests/PostgresFixture.swift);
        // the contract's checks at both backends.
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "BlegateServer", "BackendContract", "BlegateTestSupport", "TestBackend", "DBus", "Simulator", "TimeZoneFiles", "Timing",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            exclude: ["staff_browser.py", "coach_browser.py"]
        ),
        // The engine and its backend client against the loopback backend, and the client alone
        // against raw loopback servers, plain and TLS (certificates by `openssl`).
        .testTarget(
            name: "SyncTests",
            dependencies: [
                "Sync", "TestBackend", "BackendContract", "Outbox", "WearMetrics", "Cache", "Timing", "BlegateTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // `blegate run`, `status`, `pair` as processes against the simulator and the loopback backend.
        .testTarget(
            name: "RunTests",
            dependencies: [
                "BlegateRun", "Simulator", "DBus", "BlueZ", "TestBackend", "Cache", "Config", "Sync", "GATT", "WearMetrics",
                "BlegateTestSupport", "Normalization", "Outbox", "StrapLinks", "Timing", "Classes", "BackendContract",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
