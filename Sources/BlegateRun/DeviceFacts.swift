// SPDX-License-Identifier: MIT
import Cache
import Synchronization
import WearMetrics

/// What the stream teaches the device registry (name, model, firmware, battery),
/// gathered in memory on the notification threads and written to the cache every few
/// seconds in one transaction, and only when something was learned. (Last seen is the
/// cache's own: its group commit writes it.)
public final class DeviceFacts: Sendable {
    private let pending = Mutex<[String: DeviceUpdate]>([:])

    public init() {}

    /// Device Information and battery from a `.device` record's meta.
    func absorb(_ record: WearMetrics) {
        let model = record.meta["model_number"]
        let firmware = record.meta["firmware_version"]
        let battery = record.meta["battery"].flatMap(Double.init)
        guard model != nil || firmware != nil || battery != nil else { return }
        pending.withLock { p in
            var u = p[record.deviceID] ?? DeviceUpdate(address: record.deviceID)
            if let model { u.model = model }
            if let firmware { u.firmware = firmware }
            if let battery { u.battery = battery }
            p[record.deviceID] = u
        }
    }

    /// The name BlueZ reports for a device.
    func named(_ deviceID: String, _ name: String) {
        pending.withLock { p in
            var u = p[deviceID] ?? DeviceUpdate(address: deviceID)
            u.name = name
            p[deviceID] = u
        }
    }

    /// Writes what was learned since the last call. On failure the updates are kept
    /// for the next call (newer facts win) and the error is rethrown.
    func write(to cache: RecordCache) async throws {
        let batch = pending.withLock { p -> [DeviceUpdate] in
            defer { p.removeAll() }
            return Array(p.values)
        }
        let failed: [DeviceUpdate]
        let firstError: any Error
        do {
            try await cache.upsertDevices(batch)
            return
        } catch {
            failed = batch
            firstError = error
        }
        pending.withLock { p in
            for old in failed {
                var merged = old
                if let new = p[old.address] {
                    merged.name = new.name ?? old.name
                    merged.model = new.model ?? old.model
                    merged.firmware = new.firmware ?? old.firmware
                    merged.battery = new.battery ?? old.battery
                    merged.lastSeen = new.lastSeen ?? old.lastSeen
                }
                p[old.address] = merged
            }
        }
        throw firstError
    }
}
