// SPDX-License-Identifier: MIT
import GATT
import Testing

@Suite("Body Sensor Location, Battery Level, Device Information")
struct SimpleCharacteristicTests {
    @Test("body sensor location: ear lobe, reserved, empty")
    func bodySensorLocation() throws {
        guard case let .bodySensorLocation(l) = try decode(.bodySensorLocation, "05") else { Issue.record(); return }
        #expect(l.rawValue == 5)
        #expect(l.displayName == "Ear Lobe")
        #expect(l.label == "ear_lobe")
        #expect(l.isOptical)
        guard case let .bodySensorLocation(r) = try decode(.bodySensorLocation, "07") else { Issue.record(); return }
        #expect(r.label == "reserved_7")
        #expect(rejection(.bodySensorLocation, "") ==
            GATTDecodeError(characteristic: .bodySensorLocation, field: "body sensor location", offset: 0, reason: .truncated(needed: 1, available: 0)))
        guard case let .bodySensorLocation(c) = try decode(.bodySensorLocation, "01 00") else { Issue.record(); return }
        #expect(c.label == "chest" && c.ignoredTrailingBytes == 1)
    }

    @Test("battery level vectors")
    func battery() throws {
        guard case let .batteryLevel(full) = try decode(.batteryLevel, "64") else { Issue.record(); return }
        #expect(full.percent == 100)
        #expect(try fields(full)["meta_battery"] as? String == "1.00")
        guard case let .batteryLevel(low) = try decode(.batteryLevel, "0F") else { Issue.record(); return }
        #expect(low.percent == 15)
        #expect(try fields(low)["meta_battery"] as? String == "0.15")
        #expect(rejection(.batteryLevel, "65") ==
            GATTDecodeError(characteristic: .batteryLevel, field: "battery level", offset: 0, reason: .outOfRange(value: 101, allowed: 0...100)))
        guard case let .batteryLevel(long) = try decode(.batteryLevel, "64 00") else { Issue.record(); return }
        #expect(long.percent == 100 && long.ignoredTrailingBytes == 1)
        #expect(rejection(.batteryLevel, "") != nil)
    }

    @Test("device information strings: NUL padding, whitespace, Latin-1, empty")
    func deviceInformation() throws {
        guard case let .deviceInformation(a) = try decode(.manufacturerName, "50 6F 6C 61 72 00 00") else { Issue.record(); return }
        #expect(a.value == "Polar")
        #expect(a.metaKey == "manufacturer_name")
        guard case let .deviceInformation(b) = try decode(.firmwareRevision, "20 33 2E 31 2E 30 20 20") else { Issue.record(); return }
        #expect(b.value == "3.1.0")
        #expect(b.metaKey == "firmware_version")
        guard case let .deviceInformation(c) = try decode(.modelNumber, "48 E9 6C 6C 6F") else { Issue.record(); return }
        #expect(c.value == "H\u{E9}llo")
        #expect(c.decodedAsLatin1)
        #expect(c.rawHex == "48e96c6c6f")
        guard case let .deviceInformation(d) = try decode(.serialNumber, "") else { Issue.record(); return }
        #expect(d.value == "")
        guard case let .deviceInformation(e) = try decode(.hardwareRevision, "C3 A9 74 C3 A9") else { Issue.record(); return }
        #expect(e.value == "\u{E9}t\u{E9}" && !e.decodedAsLatin1)
    }

    @Test("device information strings from a hostile device: escape sequences, C1 controls, overrides and length made safe")
    func hostileDeviceInformation() throws {
        // "H10" ESC "[2J" ESC "]0;x" BEL, U+202E (UTF-8 E2 80 AE) "exe", then 300 × "A".
        let hostile = "48 31 30 1B 5B 32 4A 1B 5D 30 3B 78 07 E2 80 AE 65 78 65 " + Array(repeating: "41", count: 300).joined(separator: " ")
        guard case let .deviceInformation(a) = try decode(.modelNumber, hostile) else { Issue.record(); return }
        #expect(a.value == "H10\u{FFFD}[2J\u{FFFD}]0;x\u{FFFD}\u{FFFD}exe" + String(repeating: "A", count: 64 - 17) + "…", "\(a.value)")
        #expect(a.rawHex?.hasPrefix("4831301b5b324a") == true, "the bytes as they came, for diagnostics")
        #expect(try fields(a)["raw_hex"] as? String == a.rawHex)
        // Latin-1 turns 0x80–0x9F into C1 controls (0x9B is a one-byte CSI): those go too.
        guard case let .deviceInformation(b) = try decode(.firmwareRevision, "31 2E 30 9B 33 31 6D") else { Issue.record(); return }
        #expect(b.value == "1.0\u{FFFD}31m" && b.decodedAsLatin1)
        // A clean string is untouched and carries no raw bytes.
        guard case let .deviceInformation(c) = try decode(.serialNumber, "43 33 31 34 35 39") else { Issue.record(); return }
        #expect(c.value == "C31459" && c.rawHex == nil)
        #expect(try fields(c)["raw_hex"] == nil)
    }
}
