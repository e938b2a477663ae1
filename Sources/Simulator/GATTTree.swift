import DBus

/// What a characteristic does when read, written or notified.
enum CharacteristicRole: Sendable, Hashable {
    case serviceChanged
    case heartRateMeasurement
    case bodySensorLocation
    case heartRateControlPoint
    case batteryLevel
    case staticValue([UInt8])
    case vendorNotify
    case weightMeasurement
    case bodyCompositionMeasurement
}

struct CharacteristicSpec: Sendable, Hashable {
    var uuid: String
    /// Handle of the characteristic declaration (BlueZ names the object after it).
    var handle: UInt16
    var flags: [String]
    /// Handle of its Client Characteristic Configuration descriptor (0x2902), if any.
    var cccdHandle: UInt16?
    var role: CharacteristicRole

    var notifies: Bool { flags.contains("notify") || flags.contains("indicate") }
    var readable: Bool { flags.contains("read") }
    var writable: Bool { flags.contains("write") || flags.contains("write-without-response") }
}

struct ServiceSpec: Sendable, Hashable {
    var uuid: String
    var handle: UInt16
    var characteristics: [CharacteristicSpec]
}

/// The attribute table of each model, laid out the way a peripheral's GATT server
/// numbers handles (GAP first, then GATT, then the profile services), which is what
/// BlueZ turns into `serviceXXXX/charXXXX/descXXXX` object names. GAP (0x1800) is
/// part of the table but, as in bluetoothd, is not exported over D-Bus.
enum GATTTree {
    static let polarPMDService = "fb005c80-02e7-f387-1cad-8acd2d8df0c8"

    static func layout(for identity: VirtualDeviceIdentity) -> [ServiceSpec] {
        let model = identity.model
        var handle: UInt16 = 0x0008  // 0x0001-0x0007: GAP (Device Name, Appearance, PPCP)
        var services: [ServiceSpec] = []

        func service(_ uuid: String, _ chars: [(String, [String], Bool, CharacteristicRole)]) {
            let start = handle
            var specs: [CharacteristicSpec] = []
            handle += 1
            for (uuid, flags, cccd, role) in chars {
                let decl = handle
                handle += 2  // declaration + value
                var cccdHandle: UInt16?
                if cccd {
                    cccdHandle = handle
                    handle += 1
                }
                specs.append(CharacteristicSpec(uuid: uuid, handle: decl, flags: flags, cccdHandle: cccdHandle, role: role))
            }
            services.append(ServiceSpec(uuid: uuid, handle: start, characteristics: specs))
        }

        service(bluetoothUUID(0x1801), [(bluetoothUUID(0x2A05), ["indicate"], true, .serviceChanged)])
        if model == .scale {
            // Weight Scale Feature: BMI and height supported, 0.005 kg / 0.001 m resolution
            // (what the SI encoding uses); Body Composition Feature: body fat only.
            service(bluetoothUUID(0x181D), [
                (bluetoothUUID(0x2A9E), ["read"], false, .staticValue([0x0E, 0x00, 0x00, 0x00])),
                (bluetoothUUID(0x2A9D), ["indicate"], true, .weightMeasurement),
            ])
            service(bluetoothUUID(0x181B), [
                (bluetoothUUID(0x2A9B), ["read"], false, .staticValue([0x00, 0x00, 0x00, 0x00])),
                (bluetoothUUID(0x2A9C), ["indicate"], true, .bodyCompositionMeasurement),
            ])
            let dis: [(UInt16, String)] = [(0x2A29, model.manufacturer), (0x2A24, model.modelNumber), (0x2A25, identity.serialNumber)]
            service(bluetoothUUID(0x180A), dis.map { (bluetoothUUID($0.0), ["read"], false, .staticValue(identity.deviceInformation[$0.0] ?? Array($0.1.utf8))) })
            return services
        }
        var hr: [(String, [String], Bool, CharacteristicRole)] = [
            (bluetoothUUID(0x2A37), ["notify"], true, .heartRateMeasurement),
            (bluetoothUUID(0x2A38), ["read"], false, .bodySensorLocation),
        ]
        if model.hasControlPoint { hr.append((bluetoothUUID(0x2A39), ["write"], false, .heartRateControlPoint)) }
        service(bluetoothUUID(0x180D), hr)
        if model.hasBatteryService {
            service(bluetoothUUID(0x180F), [(bluetoothUUID(0x2A19), ["read", "notify"], true, .batteryLevel)])
        }
        let dis: [(UInt16, String)] = [
            (0x2A29, model.manufacturer), (0x2A24, model.modelNumber), (0x2A25, identity.serialNumber),
            (0x2A26, model.firmware), (0x2A27, model.hardware), (0x2A28, model.software),
        ]
        service(bluetoothUUID(0x180A), dis.map { (bluetoothUUID($0.0), ["read"], false, .staticValue(identity.deviceInformation[$0.0] ?? Array($0.1.utf8))) })
        if model == .polarH10 {
            // Polar's measurement-data service: a vendor UUID a gateway must leave alone.
            service(polarPMDService, [
                ("fb005c81-02e7-f387-1cad-8acd2d8df0c8", ["read", "write", "indicate"], true, .staticValue([0x0F, 0x05, 0x00, 0x01])),
                ("fb005c82-02e7-f387-1cad-8acd2d8df0c8", ["notify"], true, .vendorNotify),
            ])
        }
        return services
    }

    static func hex4(_ h: UInt16) -> String {
        DeviceCatalog.hex(UInt64(h), digits: 4).lowercased()
    }

    static func servicePath(_ device: DBusObjectPath, _ s: ServiceSpec) -> DBusObjectPath {
        device.appending("service" + hex4(s.handle))
    }

    static func characteristicPath(_ service: DBusObjectPath, _ c: CharacteristicSpec) -> DBusObjectPath {
        service.appending("char" + hex4(c.handle))
    }

    static func descriptorPath(_ characteristic: DBusObjectPath, _ handle: UInt16) -> DBusObjectPath {
        characteristic.appending("desc" + hex4(handle))
    }

    /// Every UUID the device ends up listing once its services are resolved.
    static func resolvedUUIDs(_ identity: VirtualDeviceIdentity) -> [String] {
        var set = Set(identity.model.advertisedServices.map(bluetoothUUID))
        set.insert(bluetoothUUID(0x1800))
        for s in layout(for: identity) { set.insert(s.uuid) }
        return set.sorted()
    }
}
