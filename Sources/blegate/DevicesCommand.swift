// SPDX-License-Identifier: MIT
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
            print(try JSONOutput.text(devices.map { DeviceLine($0, counts[$0.address]) }))
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
                + pad(clip(d.firmware ?? "-", 8), 9) + pad(battery, 6) + pad(d.lastSeen.map { LocalTime.text($0) } ?? "-", 26)
                + pad(clip(d.member?.clientID ?? "(unpaired)", 17), 18)
                + pad(String(c?.total ?? 0), 9, right: true) + pad(String(c?.pending ?? 0), 9, right: true))
        }
    }

}

/// One device of `blegate devices --json`: what is unknown is null, so every entry has
/// every key.
struct DeviceLine: Encodable {
    var address: String
    var name, model, firmware: String?
    var battery: Double?
    var firstSeen, lastSeen, clientID, pairedAt: String?
    var records, pending: Int

    init(_ d: DeviceEntry, _ c: DeviceRecordCounts?) {
        address = d.address
        name = d.name
        model = d.model
        firmware = d.firmware
        battery = d.battery
        firstSeen = d.firstSeen?.iso8601
        lastSeen = d.lastSeen?.iso8601
        clientID = d.member?.clientID
        pairedAt = d.member?.pairedAt.iso8601
        records = c?.total ?? 0
        pending = c?.pending ?? 0
    }

    enum CodingKeys: String, CodingKey {
        case address, name, model, firmware, battery, firstSeen = "first_seen", lastSeen = "last_seen", clientID = "client_id"
        case pairedAt = "paired_at", records, pending
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(address, forKey: .address)
        try c.encode(name, forKey: .name)
        try c.encode(model, forKey: .model)
        try c.encode(firmware, forKey: .firmware)
        try c.encode(JSONOutput.finite(battery), forKey: .battery)
        try c.encode(firstSeen, forKey: .firstSeen)
        try c.encode(lastSeen, forKey: .lastSeen)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(pairedAt, forKey: .pairedAt)
        try c.encode(records, forKey: .records)
        try c.encode(pending, forKey: .pending)
    }
}
