// SPDX-License-Identifier: MIT
import DBus
import Simulator
import Testing

/// A simulated bluetoothd on a private bus, in-process, for tests that run the real
/// `blegate` binary against it. Everything is stopped when `body` returns or throws.
public func withSimulatorOnPrivateBus(_ configure: (inout SimulatorConfiguration) -> Void,
                                      _ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
    try #require(BlegateBinary.exists, "no blegate binary at \(BlegateBinary.path)")
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
