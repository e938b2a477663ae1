// swift-tools-version: 6.1
import PackageDescription

// The layers read bottom-up: C shims (CDBus, CBluetooth) are imported only by the
// D-Bus and HCI layers; everything above them is pure Swift and testable without a bus.
let package = Package(
    name: "blegate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blegate", targets: ["blegate"]),
        .executable(name: "blegate-stream", targets: ["blegate-stream"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
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
        .target(name: "DBus", dependencies: ["CDBus"]),
        .target(name: "HCI", dependencies: ["CBluetooth"]),

        // Pure Swift.
        .target(name: "GATT"),
        .target(name: "HRV"),
        .target(name: "WearMetrics", dependencies: ["GATT", "HRV"]),
        .target(name: "Simulator", dependencies: ["DBus", "GATT"]),
        .target(name: "BlueZ", dependencies: ["DBus"]),
        // The cache-to-sync contract, so neither side depends on the other.
        .target(name: "Outbox", dependencies: ["WearMetrics"]),
        // Reconnect pacing, slots and device selection: pure policy, no bus.
        .target(name: "LinkPolicy"),
        // The BlueZ client that keeps straps connected (stream, run).
        .target(name: "Gateway", dependencies: ["DBus", "BlueZ", "GATT", "HRV", "WearMetrics", "LinkPolicy"]),
        // `blegate doctor`'s checks that need no bus: main.conf, D-Bus policy files,
        // rfkill, clock, disk, Raspberry Pi radio; and the report they make.
        // <sys/timex.h> (adjtimex) for the doctor's clock check; header-only like CBluetooth.
        .systemLibrary(name: "CTimex"),
        .target(name: "Doctor", dependencies: ["CTimex", "GATT"]),
        // The gateway's TOML configuration, validated into a typed tree.
        .target(name: "Config", dependencies: [.product(name: "TOMLKit", package: "TOMLKit")]),
        // Durable record cache (SQLite): the outbox the sync engine drains, and the device registry.
        .target(
            name: "Cache",
            dependencies: [
                "WearMetrics", "Outbox", "GATT",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Delivers outbox records to the HTTP backend (docs/sync.md, docs/backend-openapi.yaml).
        .target(
            name: "Sync",
            dependencies: [
                "Outbox", "WearMetrics", "GATT",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        // A loopback implementation of the backend contract with fault injection, for tests.
        .target(
            name: "TestBackend",
            dependencies: [
                "Outbox", "WearMetrics",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        // Max HR, zones, kcal and effort points: pure maths for the wall and workouts.
        .target(name: "Effort"),
        // The wall: a live page of every member's heart rate, served by `blegate run`.
        .target(
            name: "Wall",
            dependencies: [
                "Effort", "WearMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // `blegate run`: straps → cache → backend as one service group, status socket.
        .target(
            name: "GatewayService",
            dependencies: [
                "Gateway", "Cache", "Config", "Sync", "DBus", "HCI", "LinkPolicy", "HRV", "WearMetrics", "Wall", "Effort",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
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

        // `blegate scan` and `blegate stream`, shared by both executables below.
        .target(
            name: "LinkCommands",
            dependencies: [
                "DBus", "BlueZ", "GATT", "HRV", "WearMetrics", "Gateway", "LinkPolicy",
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // scan and stream alone, without Foundation, SQLite, HTTP or TLS: `blegate` execs it
        // for those two commands so a stream holds only the stream path in memory.
        .executableTarget(
            name: "blegate-stream",
            dependencies: ["LinkCommands", "Gateway"]
        ),
        .executableTarget(
            name: "blegate",
            dependencies: [
                "LinkCommands", "DBus", "HCI", "GATT", "HRV", "WearMetrics", "Simulator", "BlueZ", "Gateway", "LinkPolicy", "Doctor", "Config", "Cache",
                "GatewayService", "Sync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "blegate-bench",
            dependencies: [
                "DBus", "Simulator", "GATT", "HRV", "WearMetrics", "Cache", "Outbox", "Sync", "TestBackend",
                "GatewayService", "Gateway", "Config",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/blegate-bench"
        ),

        // Shared by the test targets: running the real binary, background processes.
        .target(name: "BlegateTestSupport", dependencies: ["Simulator", "DBus", "GATT", "WearMetrics"], path: "Tests/Support"),

        .testTarget(name: "DBusTests", dependencies: ["DBus"]),
        .testTarget(name: "HCITests", dependencies: ["HCI"]),
        .testTarget(name: "GATTTests", dependencies: ["GATT"]),
        // LinkPolicy for its seeded generator (JitterSource), which the property tests use.
        .testTarget(name: "HRVTests", dependencies: ["HRV", "LinkPolicy"], resources: [.copy("Fixtures")]),
        .testTarget(name: "WearMetricsTests", dependencies: ["WearMetrics"]),
        .testTarget(name: "SimulatorTests", dependencies: ["Simulator", "DBus", "GATT", "BlegateTestSupport"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "Simulator", "DBus", "BlegateTestSupport"]),
        .testTarget(name: "LinkPolicyTests", dependencies: ["LinkPolicy"]),
        .testTarget(name: "LinkCommandsTests", dependencies: ["LinkCommands"]),
        .testTarget(name: "GatewayTests", dependencies: ["Gateway", "Simulator", "DBus", "BlueZ", "GATT", "WearMetrics", "BlegateTestSupport"]),
        .testTarget(name: "DoctorTests", dependencies: ["Doctor", "Simulator", "DBus", "BlegateTestSupport"]),
        // The systemd unit, udev rules and install.sh, checked with the system's own tools.
        .testTarget(name: "DeploymentTests", dependencies: ["BlegateTestSupport"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config"]),
        .testTarget(name: "EffortTests", dependencies: ["Effort"]),
        // The wall in headless Chromium against the simulator, and its board without a browser.
        .testTarget(
            name: "WallTests",
            dependencies: [
                "Wall", "Effort", "WearMetrics", "TestBackend", "BlegateTestSupport", "Simulator", "DBus",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["wall_browser.py"]
        ),
        .testTarget(
            name: "CacheTests",
            dependencies: ["Cache", "Config", "Outbox", "WearMetrics", "GATT", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "SyncTests", dependencies: ["Sync", "TestBackend", "Outbox", "WearMetrics"]),
        // `blegate run`, `status`, `pair` as processes against the simulator and the loopback backend.
        .testTarget(
            name: "RunTests",
            dependencies: ["GatewayService", "Simulator", "DBus", "TestBackend", "Cache", "Config", "GATT", "WearMetrics", "BlegateTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
