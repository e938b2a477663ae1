// SPDX-License-Identifier: MIT
import JSON
import ArgumentParser
import Cache
import GATT
import ScanStreamCommands
import WearMetrics

/// `blegate devices`: the device registry with each device's member and backlog.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List known devices with their paired member.",
        discussion: "Exit status: 0 done, 1 cache error, 78 configuration error."
    )

    @OptionGroup var gateway: GatewayOptions

    @Flag(help: "Print a JSON array.")
    var json = false

    func run() async throws {
        let config = try gateway.load()
        let cache = try gateway.openCache(config)
        let devices: [DeviceEntry]
        let counts: [String: DeviceRecordCounts]
        do {
            devices = try await cache.devices()
            counts = Dictionary(try await cache.stats().devices.map { ($0.deviceID, $0) }, uniquingKeysWith: { a, _ in a })
        } catch {
            printError("blegate devices: \(error)")
            throw ExitCode(1)
        }
        if json {
            print(JSONValue.array(devices.map { d in
                let c = counts[d.address]
                return .object([
                    ("address", .string(d.address)),
                    ("name", d.name.map(JSONValue.string) ?? .null),
                    ("model", d.model.map(JSONValue.string) ?? .null),
                    ("firmware", d.firmware.map(JSONValue.string) ?? .null),
                    ("battery", d.battery.map(JSONValue.double) ?? .null),
                    ("first_seen", d.firstSeen.map { .string($0.iso8601) } ?? .null),
                    ("last_seen", d.lastSeen.map { .string($0.iso8601) } ?? .null),
                    ("client_id", d.member.map { .string($0.clientID) } ?? .null),
                    ("paired_at", d.member.map { .string($0.pairedAt.iso8601) } ?? .null),
                    ("records", .int(c?.total ?? 0)),
                    ("pending", .int(c?.pending ?? 0)),
                ])
            }).serialized())
            return
        }
        if devices.isEmpty {
            print("no devices in \(cache.path)")
            return
        }
        print(pad("ADDRESS", 19) + pad("NAME", 20) + pad("MODEL", 10) + pad("FW", 9) + pad("BATT", 6)
            + pad("LAST SEEN", 26) + pad("MEMBER", 18) + pad("RECORDS", 9, right: true) + pad("PENDING", 9, right: true))
        for d in devices {
            let c = counts[d.address]
            let battery = d.battery.map { "\(Int(($0 * 100).rounded()))%" } ?? "-"
            print(pad(d.address, 19) + pad(clip(d.name ?? "-", 19), 20) + pad(clip(d.model ?? "-", 9), 10)
                + pad(clip(d.firmware ?? "-", 8), 9) + pad(battery, 6) + pad(d.lastSeen?.iso8601 ?? "-", 26)
                + pad(clip(d.member?.clientID ?? "(unpaired)", 17), 18)
                + pad(String(c?.total ?? 0), 9, right: true) + pad(String(c?.pending ?? 0), 9, right: true))
        }
    }

}
