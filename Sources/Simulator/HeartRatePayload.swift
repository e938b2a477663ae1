import Timing
/// The producer side of the Heart Rate Measurement characteristic (0x2A37): the
/// simulator encodes what a strap would put on the air, byte for byte.
public struct HeartRateMeasurement: Sendable, Hashable {
    public enum SensorContact: Sendable, Hashable {
        case notSupported, notDetected, detected

        var flagBits: UInt8 {
            switch self {
            case .notSupported: 0
            case .notDetected: 0b100
            case .detected: 0b110
            }
        }
    }

    public var heartRate: UInt16
    /// Flags bit 0: the value is sent as uint16 (some straps always do, even below 256).
    public var sixteenBit: Bool
    public var contact: SensorContact
    /// Cumulative kJ, flags bit 3.
    public var energyExpended: UInt16?
    /// 1/1024 s ticks, oldest first, flags bit 4.
    public var rrIntervals: [UInt16]

    public init(heartRate: UInt16, sixteenBit: Bool = false, contact: SensorContact = .notSupported,
                energyExpended: UInt16? = nil, rrIntervals: [UInt16] = []) {
        self.heartRate = heartRate
        self.sixteenBit = sixteenBit || heartRate > 255
        self.contact = contact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
    }

    /// A notification value carries at most ATT_MTU - 3 bytes; with the default MTU of
    /// 23 that is 20, and straps size their RR lists for it whatever MTU is negotiated.
    public static let maximumLength = 20

    /// How many RR values fit beside the other fields.
    public static func rrCapacity(sixteenBit: Bool, energy: Bool) -> Int {
        (maximumLength - 1 - (sixteenBit ? 2 : 1) - (energy ? 2 : 0)) / 2
    }

    public var bytes: [UInt8] {
        var flags = contact.flagBits
        if sixteenBit { flags |= 0b1 }
        if energyExpended != nil { flags |= 0b1000 }
        if !rrIntervals.isEmpty { flags |= 0b1_0000 }
        var out: [UInt8] = [flags]
        if sixteenBit {
            out.append(UInt8(heartRate & 0xFF))
            out.append(UInt8(heartRate >> 8))
        } else {
            out.append(UInt8(min(heartRate, 255)))
        }
        if let energyExpended {
            out.append(UInt8(energyExpended & 0xFF))
            out.append(UInt8(energyExpended >> 8))
        }
        for rr in rrIntervals {
            out.append(UInt8(rr & 0xFF))
            out.append(UInt8(rr >> 8))
        }
        return out
    }
}

/// Payloads a conforming parser must reject: each one announces (or needs) a field it
/// does not carry, so a gateway that counts and skips them is provably robust.
public enum MalformedHeartRatePayload {
    public static func make(_ rng: inout SeededRandom, heartRate: UInt8) -> [UInt8] {
        switch rng.int(0...5) {
        case 0: return []                                   // empty notification
        case 1: return [0x16]                               // flags only, no HR value
        case 2: return [0x01, heartRate]                    // uint16 HR cut after one byte
        case 3: return [0x0E, heartRate]                    // energy announced, missing
        case 4: return [0x1F, heartRate, 0x00, 0x2C]        // uint16 HR + energy cut short
        default: return [0x09, heartRate, 0x00, 0x10]      // uint16 HR, energy one byte short
        }
    }
}

extension Array where Element == UInt8 {
    var hexString: String {
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f"]
        var s = ""
        s.reserveCapacity(count * 2)
        for b in self {
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 0x0F)])
        }
        return s
    }
}
