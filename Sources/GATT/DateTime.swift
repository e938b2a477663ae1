// SPDX-License-Identifier: MIT

/// The 7-octet GATT Date Time (HTS, WSS, BCS). It is device local time with no zone,
/// so blegate reports it in `meta` and never uses it as the record timestamp by default.
public struct GATTDateTime: Equatable, Sendable {
    /// 0 = unknown
    public var year: UInt16
    /// 0 = unknown
    public var month: UInt8
    /// 0 = unknown
    public var day: UInt8
    public var hours: UInt8
    public var minutes: UInt8
    public var seconds: UInt8

    public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
        self.year = year; self.month = month; self.day = day
        self.hours = hours; self.minutes = minutes; self.seconds = seconds
    }

    /// `YYYY-MM-DDTHH:MM:SS` (unzoned). Unknown parts print as zeros; out-of-range parts
    /// are printed as sent, because rejecting a whole measurement over a bad clock would
    /// lose the weight or temperature that is the point of it.
    public var isoLocal: String {
        pad(Int(year), 4) + "-" + pad(Int(month), 2) + "-" + pad(Int(day), 2) + "T"
            + pad(Int(hours), 2) + ":" + pad(Int(minutes), 2) + ":" + pad(Int(seconds), 2)
    }

    /// False when the device said "unknown" (year, month or day 0) or sent impossible parts.
    public var isPlausible: Bool {
        year >= 1582 && year <= 9999 && (1...12).contains(month) && (1...31).contains(day)
            && hours < 24 && minutes < 60 && seconds < 60
    }
}

func pad(_ value: Int, _ width: Int) -> String {
    var s = String(value)
    while s.count < width { s = "0" + s }
    return s
}
