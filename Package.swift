// swift-tools-version: 6.1
import PackageDescription

// The layers read bottom-up: C shims (CDBus, CBluetooth) are imported only by the
// D-Bus and HCI layers; everything above them is pure Swift and testable without a bus.
let package = Package(
    name: "blegate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blegate", targets: ["blegate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
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

        .executableTarget(
            name: "blegate",
            dependencies: [
                "DBus", "HCI", "GATT", "HRV", "WearMetrics", "Simulator", "BlueZ", "Config", "Cache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "blegate-bench", dependencies: ["DBus", "Simulator", "GATT", "HRV", "WearMetrics", "Cache", "Outbox"], path: "Benchmarks/blegate-bench"),

        .testTarget(name: "DBusTests", dependencies: ["DBus"]),
        .testTarget(name: "HCITests", dependencies: ["HCI"]),
        .testTarget(name: "GATTTests", dependencies: ["GATT"]),
        .testTarget(name: "HRVTests", dependencies: ["HRV"], resources: [.copy("Fixtures")]),
        .testTarget(name: "WearMetricsTests", dependencies: ["WearMetrics"]),
        .testTarget(name: "SimulatorTests", dependencies: ["Simulator", "DBus", "GATT"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "Simulator", "DBus"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config"]),
        .testTarget(
            name: "CacheTests",
            dependencies: ["Cache", "Config", "Outbox", "WearMetrics", "GATT", .product(name: "GRDB", package: "GRDB.swift")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
