// SPDX-License-Identifier: MIT

/// One decoded FTMS value.
public struct FTMSValue: Sendable, Equatable {
    public var field: FTMSField
    /// In the unit named by the field (raw ÷ divisor).
    public var value: Double
    public var raw: Int
}

/// Treadmill 0x2ACD, Cross Trainer 0x2ACE, Rower 0x2AD1 and Indoor Bike 0x2AD2 Data.
///
/// The FTMS v1.0 and GSS layouts are told apart by length: the record must match one
/// of them exactly (v1.0 tried first), otherwise it is rejected — a length mismatch is
/// the only signal of which layout the firmware speaks, so extra bytes are not ignored
/// here as they are elsewhere.
public struct FitnessMachineData: Sendable, Equatable {
    public var machine: FitnessMachineType
    public var layout: FTMSLayout
    /// True when no layout-dependent field was present, so both layouts fit.
    public var layoutAmbiguous: Bool
    public var flags: UInt32
    /// Flags bit 0 set: the speed/stroke group is absent and more fragments follow.
    public var moreData: Bool { flags & 1 != 0 }
    /// Values in wire order; "Data Not Available" sentinels are left out.
    public var values: [FTMSValue]
    /// Fields that were present but carried the "Data Not Available" sentinel.
    public var notAvailable: [FTMSField]

    public subscript(field: FTMSField) -> Double? { values.first(where: { $0.field == field })?.value }

    public var rfuFlagBits: UInt32 {
        machine == .crossTrainer ? flags & 0xFF_0000 : flags & 0xE000
    }

    /// Cross trainer only (flag bit 15, no field): true = backward.
    public var movementBackward: Bool? { machine == .crossTrainer ? flags & 0x8000 != 0 : nil }

    /// Unit of the treadmill pace fields in this layout.
    public var paceUnit: String { layout == .v1 ? "km_per_min" : "s" }

    public init(machine: FitnessMachineType, bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        let characteristic = machine.characteristic
        let flagsSize = FTMSTables.flagsSize(machine)
        var probe = ByteReader(bytes, characteristic)
        let flags = flagsSize == 3 ? try probe.u24("flags") : UInt32(try probe.u16("flags"))
        let groups = FTMSTables.groups(machine)

        var v1Length = flagsSize, gssLength = flagsSize
        for group in groups where FitnessMachineData.present(group.bit, flags) {
            for spec in group.fields {
                v1Length += spec.v1.size
                gssLength += spec.gss.size
            }
        }
        let layout: FTMSLayout
        switch bytes.count {
        case v1Length: layout = .v1
        case gssLength: layout = .gss
        default:
            if bytes.count > min(v1Length, gssLength) {
                throw GATTDecodeError(characteristic: characteristic, field: "record length", offset: bytes.count,
                                      reason: .layoutMismatch(length: bytes.count, expectedV1: v1Length, expectedGSS: gssLength))
            }
            layout = .v1   // the parse below throws a truncation error naming the field
        }

        var r = ByteReader(bytes, characteristic)
        _ = flagsSize == 3 ? try r.u24("flags") : UInt32(try r.u16("flags"))
        var values: [FTMSValue] = []
        var notAvailable: [FTMSField] = []
        for group in groups where FitnessMachineData.present(group.bit, flags) {
            for spec in group.fields {
                let name = spec.field.rawValue
                let raw: Int
                var sentinelHit = false
                switch spec.wire(layout) {
                case .u8:
                    let v = try r.u8(name)
                    raw = Int(v)
                    sentinelHit = spec.notAvailable == 0xFF && v == 0xFF
                case .u16:
                    let v = try r.u16(name)
                    raw = Int(v)
                    sentinelHit = spec.notAvailable == 0xFFFF && v == 0xFFFF
                case .s16: raw = Int(try r.s16(name))
                case .u24: raw = Int(try r.u24(name))
                }
                if sentinelHit {
                    notAvailable.append(spec.field)
                } else {
                    values.append(FTMSValue(field: spec.field, value: Double(raw) / spec.divisor(layout), raw: raw))
                }
            }
        }
        self.machine = machine
        self.layout = layout
        self.layoutAmbiguous = v1Length == gssLength
        self.flags = flags
        self.values = values
        self.notAvailable = notAvailable
    }

    static func present(_ bit: Int, _ flags: UInt32) -> Bool {
        let set = flags & (1 << UInt32(bit)) != 0
        return bit == 0 ? !set : set
    }
}

extension FitnessMachineData: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("machine_type", machine.rawValue)
        try o.add("layout", layout.rawValue)
        if layoutAmbiguous { try o.add("layout_ambiguous", true) }
        try o.add("flags", Int(flags))
        try o.add("more_data", moreData)
        for v in values {
            var key = v.field.rawValue
            if machine == .treadmill, v.field == .instantaneousPace || v.field == .averagePace {
                key += "_" + paceUnit
            }
            try o.add(key, v.value)
        }
        for field in notAvailable { try o.addNull(field.rawValue) }
        if let backward = movementBackward { try o.add("movement_direction", backward ? "backward" : "forward") }
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
    }
}
