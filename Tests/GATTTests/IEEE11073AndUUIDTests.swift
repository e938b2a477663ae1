// SPDX-License-Identifier: MIT
import GATT
import Testing

@Suite("IEEE-11073 SFLOAT/FLOAT and UUID lookup")
struct IEEE11073AndUUIDTests {
    static let sfloatVectors: [(UInt16, IEEE11073Value)] = [
        (0x0048, .value(72)), (0xF065, .value(10.1)), (0xF3CF, .value(97.5)), (0x1005, .value(50)),
        (0xFFFF, .value(-0.1)), (0x0FFF, .value(-1)), (0x8001, .value(1e-8)), (0x7001, .value(1e7)),
        (0x17FF, .value(20470)),
        (0x07FF, .nan), (0x0800, .nres), (0x07FE, .positiveInfinity), (0x0802, .negativeInfinity), (0x0801, .reserved),
    ]

    static let floatVectors: [(UInt32, IEEE11073Value)] = [
        (0xFE00_0EB0, .value(37.6)), (0xFE12_D687, .value(12345.67)), (0xFF00_03DA, .value(98.6)),
        (0xFFFF_FFFF, .value(-0.1)), (0x0180_0000, .value(-83_886_080)),
        (0x007F_FFFF, .nan), (0x0080_0000, .nres), (0x007F_FFFE, .positiveInfinity),
        (0x0080_0002, .negativeInfinity), (0x0080_0001, .reserved),
    ]

    @Test("SFLOAT vectors", arguments: sfloatVectors)
    func sfloat(raw: UInt16, expected: IEEE11073Value) {
        #expect(IEEE11073Value(sfloat: raw) == expected)
    }

    @Test("FLOAT vectors", arguments: floatVectors)
    func float(raw: UInt32, expected: IEEE11073Value) {
        #expect(IEEE11073Value(float: raw) == expected)
    }

    @Test("every SFLOAT decodes to a finite value or a named special")
    func sfloatExhaustive() {
        var specials = 0
        for raw in 0...UInt16.max {
            let v = IEEE11073Value(sfloat: raw)
            if let f = v.finite { #expect(f.isFinite) } else { specials += 1 }
        }
        #expect(specials == 5)
    }

    @Test("16-bit, 128-bit and name identifiers")
    func uuidLookup() {
        #expect(GATTCharacteristic(identifier: "2a37") == .heartRateMeasurement)
        #expect(GATTCharacteristic(identifier: "0x2A37") == .heartRateMeasurement)
        #expect(GATTCharacteristic(identifier: "00002A37-0000-1000-8000-00805F9B34FB") == .heartRateMeasurement)
        #expect(GATTCharacteristic(identifier: "00002a37") == .heartRateMeasurement)
        #expect(GATTCharacteristic(identifier: "heart_rate_measurement") == .heartRateMeasurement)
        #expect(GATTCharacteristic(identifier: "indoor_bike_data") == .indoorBikeData)
        #expect(GATTCharacteristic(identifier: "manufacturer_name") == .manufacturerName)
        // Vendor UUIDs are never run through SIG parsers.
        #expect(GATTCharacteristic(identifier: "00002a37-0000-1000-8000-00805f9b34fc") == nil)
        #expect(GATTCharacteristic(identifier: "000078b2-0000-1000-8000-00805f9b34fb") == nil)
        #expect(GATTCharacteristic(identifier: "zz37") == nil)
        #expect(GATTCharacteristic.heartRateMeasurement.uuidString == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(GATTCharacteristic.heartRateMeasurement.hex16 == "0x2A37")
        #expect(GATTUUID.sigAlias("0000fe2c-0000-1000-8000-00805f9b34fb") == 0xFE2C)
        for c in GATTCharacteristic.allCases {
            #expect(GATTCharacteristic(identifier: c.uuidString) == c)
            #expect(GATTCharacteristic(identifier: c.name) == c)
        }
    }

    @Test("unknown UUID is a typed error")
    func unknownUUID() {
        #expect(throws: GATTDecodeError(characteristic: nil, field: "uuid", offset: 0, reason: .unsupportedCharacteristic("2a39"))) {
            try GATTDecoder.decode(uuid: "2a39", bytes: [0x01])
        }
    }

    @Test("hex parsing")
    func hexParsing() {
        #expect(parseHex("16 48 10 03") == [0x16, 0x48, 0x10, 0x03])
        #expect(parseHex("16:48") == [0x16, 0x48])
        #expect(parseHex("0x1648") == [0x16, 0x48])
        #expect(parseHex("164") == nil)
        #expect(parseHex("zz") == nil)
    }
}
