// SPDX-License-Identifier: MIT

/// The four FTMS data characteristics.
public enum FitnessMachineType: String, Sendable, CaseIterable {
    case treadmill
    case crossTrainer = "cross_trainer"
    case rower
    case indoorBike = "indoor_bike"

    public var characteristic: GATTCharacteristic {
        switch self {
        case .treadmill: .treadmillData
        case .crossTrainer: .crossTrainerData
        case .rower: .rowerData
        case .indoorBike: .indoorBikeData
        }
    }
}

/// Which published layout a record matched. They differ in the size of the treadmill
/// pace fields and of Resistance Level, which shifts every later field.
public enum FTMSLayout: String, Sendable {
    /// FTMS v1.0 / SIG XML (2017): what deployed firmware was written against.
    case v1 = "ftms_v1.0"
    /// Current GATT Specification Supplement.
    case gss
}

/// A value field of the FTMS data characteristics, named with its unit as decoded
/// (machine-native units; the normalizer converts to the gateway's canonical keys).
public enum FTMSField: String, Sendable, CaseIterable {
    case instantaneousSpeed = "instantaneous_speed_kmh"
    case averageSpeed = "average_speed_kmh"
    case totalDistance = "total_distance_m"
    case inclination = "inclination_pct"
    case rampAngle = "ramp_angle_deg"
    case positiveElevationGain = "positive_elevation_gain_m"
    case negativeElevationGain = "negative_elevation_gain_m"
    /// v1.0: km/min (0.1); GSS: seconds (see `FitnessMachineData.paceUnit`)
    case instantaneousPace = "instantaneous_pace"
    case averagePace = "average_pace"
    case totalEnergy = "total_energy_kcal"
    case energyPerHour = "energy_per_hour_kcal"
    case energyPerMinute = "energy_per_minute_kcal"
    case heartRate = "heart_rate_bpm"
    case metabolicEquivalent = "metabolic_equivalent"
    case elapsedTime = "elapsed_time_s"
    case remainingTime = "remaining_time_s"
    case forceOnBelt = "force_on_belt_n"
    case powerOutput = "power_output_w"
    case stepRate = "step_per_minute"
    case averageStepRate = "average_step_rate"
    case strideCount = "stride_count"
    case resistanceLevel = "resistance_level"
    case instantaneousPower = "instantaneous_power_w"
    case averagePower = "average_power_w"
    case strokeRate = "stroke_rate_per_min"
    case strokeCount = "stroke_count"
    case averageStrokeRate = "average_stroke_rate_per_min"
    case rowerInstantaneousPace = "instantaneous_pace_s_per_500m"
    case rowerAveragePace = "average_pace_s_per_500m"
    case instantaneousCadence = "instantaneous_cadence_rpm"
    case averageCadence = "average_cadence_rpm"
}

/// On-the-wire integer types used by FTMS.
enum FTMSWire: Sendable {
    case u8, u16, s16, u24

    var size: Int {
        switch self {
        case .u8: 1
        case .u16, .s16: 2
        case .u24: 3
        }
    }
}

/// One field of a flag group: its wire type in each layout, the divisor that turns the
/// raw integer into the unit of `FTMSField`, and the "Data Not Available" sentinel.
struct FTMSFieldSpec: Sendable {
    let field: FTMSField
    let v1: FTMSWire
    let gss: FTMSWire
    let v1Divisor: Double
    let gssDivisor: Double
    let notAvailable: UInt32?

    init(_ field: FTMSField, _ wire: FTMSWire, divisor: Double = 1, notAvailable: UInt32? = nil) {
        self.field = field
        self.v1 = wire
        self.gss = wire
        self.v1Divisor = divisor
        self.gssDivisor = divisor
        self.notAvailable = notAvailable
    }

    init(_ field: FTMSField, v1: FTMSWire, v1Divisor: Double, gss: FTMSWire, gssDivisor: Double, notAvailable: UInt32? = nil) {
        self.field = field
        self.v1 = v1
        self.gss = gss
        self.v1Divisor = v1Divisor
        self.gssDivisor = gssDivisor
        self.notAvailable = notAvailable
    }

    func wire(_ layout: FTMSLayout) -> FTMSWire { layout == .v1 ? v1 : gss }
    func divisor(_ layout: FTMSLayout) -> Double { layout == .v1 ? v1Divisor : gssDivisor }
}

/// The field tables, in flag-bit order (which is wire order). Bit 0 is the inverted
/// "More Data" bit: its group is present when the bit is 0.
enum FTMSTables {
    typealias Group = (bit: Int, fields: [FTMSFieldSpec])

    static let energy: [FTMSFieldSpec] = [
        FTMSFieldSpec(.totalEnergy, .u16, notAvailable: 0xFFFF),
        FTMSFieldSpec(.energyPerHour, .u16, notAvailable: 0xFFFF),
        FTMSFieldSpec(.energyPerMinute, .u8, notAvailable: 0xFF),
    ]

    static let treadmill: [Group] = [
        (0, [FTMSFieldSpec(.instantaneousSpeed, .u16, divisor: 100)]),
        (1, [FTMSFieldSpec(.averageSpeed, .u16, divisor: 100)]),
        (2, [FTMSFieldSpec(.totalDistance, .u24)]),
        (3, [FTMSFieldSpec(.inclination, .s16, divisor: 10), FTMSFieldSpec(.rampAngle, .s16, divisor: 10)]),
        (4, [FTMSFieldSpec(.positiveElevationGain, .u16, divisor: 10), FTMSFieldSpec(.negativeElevationGain, .u16, divisor: 10)]),
        (5, [FTMSFieldSpec(.instantaneousPace, v1: .u8, v1Divisor: 10, gss: .u16, gssDivisor: 1)]),
        (6, [FTMSFieldSpec(.averagePace, v1: .u8, v1Divisor: 10, gss: .u16, gssDivisor: 1)]),
        (7, energy),
        (8, [FTMSFieldSpec(.heartRate, .u8)]),
        (9, [FTMSFieldSpec(.metabolicEquivalent, .u8, divisor: 10)]),
        (10, [FTMSFieldSpec(.elapsedTime, .u16)]),
        (11, [FTMSFieldSpec(.remainingTime, .u16)]),
        (12, [FTMSFieldSpec(.forceOnBelt, .s16), FTMSFieldSpec(.powerOutput, .s16)]),
    ]

    static let crossTrainer: [Group] = [
        (0, [FTMSFieldSpec(.instantaneousSpeed, .u16, divisor: 100)]),
        (1, [FTMSFieldSpec(.averageSpeed, .u16, divisor: 100)]),
        (2, [FTMSFieldSpec(.totalDistance, .u24)]),
        (3, [FTMSFieldSpec(.stepRate, .u16), FTMSFieldSpec(.averageStepRate, .u16)]),
        (4, [FTMSFieldSpec(.strideCount, .u16, divisor: 10)]),
        (5, [FTMSFieldSpec(.positiveElevationGain, .u16), FTMSFieldSpec(.negativeElevationGain, .u16)]),
        (6, [FTMSFieldSpec(.inclination, .s16, divisor: 10), FTMSFieldSpec(.rampAngle, .s16, divisor: 10)]),
        (7, [FTMSFieldSpec(.resistanceLevel, v1: .s16, v1Divisor: 10, gss: .u8, gssDivisor: 1)]),
        (8, [FTMSFieldSpec(.instantaneousPower, .s16)]),
        (9, [FTMSFieldSpec(.averagePower, .s16)]),
        (10, energy),
        (11, [FTMSFieldSpec(.heartRate, .u8)]),
        (12, [FTMSFieldSpec(.metabolicEquivalent, .u8, divisor: 10)]),
        (13, [FTMSFieldSpec(.elapsedTime, .u16)]),
        (14, [FTMSFieldSpec(.remainingTime, .u16)]),
    ]

    static let rower: [Group] = [
        (0, [FTMSFieldSpec(.strokeRate, .u8, divisor: 2), FTMSFieldSpec(.strokeCount, .u16)]),
        (1, [FTMSFieldSpec(.averageStrokeRate, .u8, divisor: 2)]),
        (2, [FTMSFieldSpec(.totalDistance, .u24)]),
        (3, [FTMSFieldSpec(.rowerInstantaneousPace, .u16, notAvailable: 0xFFFF)]),
        (4, [FTMSFieldSpec(.rowerAveragePace, .u16, notAvailable: 0xFFFF)]),
        (5, [FTMSFieldSpec(.instantaneousPower, .s16)]),
        (6, [FTMSFieldSpec(.averagePower, .s16)]),
        (7, [FTMSFieldSpec(.resistanceLevel, v1: .s16, v1Divisor: 1, gss: .u8, gssDivisor: 1)]),
        (8, energy),
        (9, [FTMSFieldSpec(.heartRate, .u8)]),
        (10, [FTMSFieldSpec(.metabolicEquivalent, .u8, divisor: 10)]),
        (11, [FTMSFieldSpec(.elapsedTime, .u16)]),
        (12, [FTMSFieldSpec(.remainingTime, .u16)]),
    ]

    /// Bit 1 is Average Speed and bit 2 Instantaneous Cadence, following the XML's
    /// `requires` links and the GSS (the XML bit *names* are swapped).
    static let indoorBike: [Group] = [
        (0, [FTMSFieldSpec(.instantaneousSpeed, .u16, divisor: 100)]),
        (1, [FTMSFieldSpec(.averageSpeed, .u16, divisor: 100)]),
        (2, [FTMSFieldSpec(.instantaneousCadence, .u16, divisor: 2)]),
        (3, [FTMSFieldSpec(.averageCadence, .u16, divisor: 2)]),
        (4, [FTMSFieldSpec(.totalDistance, .u24)]),
        (5, [FTMSFieldSpec(.resistanceLevel, v1: .s16, v1Divisor: 1, gss: .u8, gssDivisor: 1)]),
        (6, [FTMSFieldSpec(.instantaneousPower, .s16)]),
        (7, [FTMSFieldSpec(.averagePower, .s16)]),
        (8, energy),
        (9, [FTMSFieldSpec(.heartRate, .u8)]),
        (10, [FTMSFieldSpec(.metabolicEquivalent, .u8, divisor: 10)]),
        (11, [FTMSFieldSpec(.elapsedTime, .u16)]),
        (12, [FTMSFieldSpec(.remainingTime, .u16)]),
    ]

    static func groups(_ machine: FitnessMachineType) -> [Group] {
        switch machine {
        case .treadmill: treadmill
        case .crossTrainer: crossTrainer
        case .rower: rower
        case .indoorBike: indoorBike
        }
    }

    static func flagsSize(_ machine: FitnessMachineType) -> Int { machine == .crossTrainer ? 3 : 2 }
}
