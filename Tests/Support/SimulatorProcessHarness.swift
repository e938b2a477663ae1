// SPDX-License-Identifier: MIT
import DBus
import Simulator
import Testing

/// A simulated bluetoothd on a private bus, in-process. Everything is stopped when `body`
/// returns or throws.
public func withSimulatedBlueZ(_ configure: (inout SimulatorConfiguration) -> Void,
                               _ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
    var config = SimulatorConfiguration()
    configure(&config)
    let bus = try PrivateBus.start()
    defer { bus.stop() }
    let sim = try SimulatedBlueZ(configuration: config, bus: bus.busAddress)
    try await sim.start()
    do {
        try await body(bus, sim)
    } catch {
        await sim.stop()
        throw error
    }
    await sim.stop()
}

/// The same, for tests that run the real `blegate` binary against it.
public func withSimulatorOnPrivateBus(_ configure: (inout SimulatorConfiguration) -> Void,
                                      _ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
    try #require(BlegateBinary.exists, "no blegate binary at \(BlegateBinary.path)")
    try await withSimulatedBlueZ(configure, body)
}
