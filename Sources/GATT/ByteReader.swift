// SPDX-License-Identifier: MIT

/// Bounds-checked little-endian cursor over a payload.
///
/// Every read checks the remaining length first and throws a `GATTDecodeError` that
/// names the field, so no decoder can index past the end. Reading through a raw buffer
/// (rather than `Data` indices) also sidesteps the sliced-`Data` trap: a slice's buffer
/// always starts at offset 0.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    let characteristic: GATTCharacteristic
    private(set) var offset: Int = 0

    init(_ bytes: UnsafeRawBufferPointer, _ characteristic: GATTCharacteristic) {
        self.bytes = bytes
        self.characteristic = characteristic
    }

    var remaining: Int { bytes.count - offset }

    func truncated(_ field: String, needed: Int) -> GATTDecodeError {
        GATTDecodeError(characteristic: characteristic, field: field, offset: offset,
                        reason: .truncated(needed: needed, available: max(0, remaining)))
    }

    @inline(__always)
    mutating func need(_ n: Int, _ field: String) throws(GATTDecodeError) {
        if remaining < n { throw truncated(field, needed: n) }
    }

    @inline(__always)
    private func byte(_ i: Int) -> UInt32 { UInt32(bytes[offset + i]) }

    @inline(__always)
    mutating func u8(_ field: String) throws(GATTDecodeError) -> UInt8 {
        try need(1, field)
        let v = bytes[offset]
        offset += 1
        return v
    }

    @inline(__always)
    mutating func u16(_ field: String) throws(GATTDecodeError) -> UInt16 {
        try need(2, field)
        let v = UInt16(truncatingIfNeeded: byte(0) | byte(1) << 8)
        offset += 2
        return v
    }

    mutating func s16(_ field: String) throws(GATTDecodeError) -> Int16 {
        Int16(bitPattern: try u16(field))
    }

    mutating func u24(_ field: String) throws(GATTDecodeError) -> UInt32 {
        try need(3, field)
        let v = byte(0) | byte(1) << 8 | byte(2) << 16
        offset += 3
        return v
    }

    mutating func u32(_ field: String) throws(GATTDecodeError) -> UInt32 {
        try need(4, field)
        let v = byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24
        offset += 4
        return v
    }

    mutating func sfloat(_ field: String) throws(GATTDecodeError) -> IEEE11073Value {
        IEEE11073Value(sfloat: try u16(field))
    }

    mutating func float32(_ field: String) throws(GATTDecodeError) -> IEEE11073Value {
        IEEE11073Value(float: try u32(field))
    }

    mutating func dateTime(_ field: String) throws(GATTDecodeError) -> GATTDateTime {
        try need(7, field)
        let year = try u16(field)
        let month = try u8(field), day = try u8(field)
        let hours = try u8(field), minutes = try u8(field), seconds = try u8(field)
        return GATTDateTime(year: year, month: month, day: day, hours: hours, minutes: minutes, seconds: seconds)
    }
}

/// Runs `body` over the contiguous bytes of any collection, copying only when the
/// collection has no contiguous storage. Typed errors are carried through a `Result`
/// because `withContiguousStorageIfAvailable` only rethrows untyped errors.
@inline(__always)
func withPayload<C: Collection<UInt8>, T>(
    _ bytes: C, _ body: (UnsafeRawBufferPointer) -> Result<T, GATTDecodeError>
) throws(GATTDecodeError) -> T {
    let result = bytes.withContiguousStorageIfAvailable { body(UnsafeRawBufferPointer($0)) }
        ?? Array(bytes).withUnsafeBytes { body($0) }
    return try result.get()
}

extension Result where Failure == GATTDecodeError {
    @inline(__always)
    init(catching body: () throws(GATTDecodeError) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
}
