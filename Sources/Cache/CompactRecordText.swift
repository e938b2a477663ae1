// SPDX-License-Identifier: MIT

/// The stored form of a record's JSON text: the same text with its recurring pieces (the
/// keys of every record, the device information each heart-rate record repeats) written as
/// one byte each.
///
/// A heart-rate record's JSON is about 415 bytes, two thirds of them keys; stored this way
/// it takes about 160. On an SD card every byte of a record is written twice (WAL, then
/// checkpoint), so this is most of what a record costs the card.
///
/// JSON text never holds a raw byte below 0x20 (RFC 8259 escapes them in strings), so
/// those bytes are free: 0x01 marks the compact form, 0x02...0x1F stand for the pieces in
/// `pieces`. A payload that does not start with 0x01 is plain JSON (rows stored before
/// this form existed, and any text that holds a control byte after all). The table is
/// part of the file format: pieces may only ever be appended under a new marker.
enum CompactRecordText {
    static let marker: UInt8 = 0x01

    /// Byte 0x02 + i stands for `pieces[i]`.
    static let pieces: [[UInt8]] = [
        #"{"timestamp":"20"#, #"Z","device_id":""#, #"","source":"ble_"#, #"","metrics":{"#, #"},"meta":{"#,
        #""hr":"#, #""sensor_contact":""#, #"","rr_count":""#, #"","manufacturer_name":""#, #"","model_number":""#,
        #"","serial_number":""#, #"","firmware_version":""#, #"","hardware_version":""#, #"","software_version":""#,
        #"","body_sensor_location":""#, #""battery":"#, #""},"rr_ms":["#, #"","hrv_"#, "detected", "unsupported",
        #"",""#, #""}}"#, "chest", #"window_s":""#, #"_count":""#, #""device_timestamp":""#, #""hr_source":""#,
        #"_pct":""#, "device", #""energy_expended_kj":"#,
    ].map { Array($0.utf8) }

    /// A piece as the compaction's inner loop tests it: its first (up to) 8 bytes as a
    /// little-endian word with the mask of those bytes, so that most pieces are ruled out
    /// with one comparison of the text's next 8 bytes.
    private struct Candidate {
        var prefix: UInt64
        var mask: UInt64
        var index: Int32
        var length: Int32
    }

    /// The pieces as flat tables: their bytes end to end, where each starts, and the
    /// candidates grouped by first byte (in table order). Built once and never freed (the
    /// process's lifetime), so the inner loop reads them as plain buffers.
    private struct Table: @unchecked Sendable {
        let bytes: UnsafeBufferPointer<UInt8>
        /// Piece i is `bytes[start[i]..<start[i + 1]]`.
        let start: UnsafeBufferPointer<Int32>
        /// The pieces starting with byte b are `candidates[firstStart[b]..<firstStart[b + 1]]`.
        let candidates: UnsafeBufferPointer<Candidate>
        let firstStart: UnsafeBufferPointer<Int32>

        init() {
            var bytes: [UInt8] = []
            var start: [Int32] = [0]
            for p in pieces {
                bytes += p
                start.append(Int32(bytes.count))
            }
            var candidates: [Candidate] = []
            var firstStart = [Int32](repeating: 0, count: 257)
            for b in 0..<256 {
                firstStart[b] = Int32(candidates.count)
                for (i, p) in pieces.enumerated() where p[0] == UInt8(b) {
                    var prefix: UInt64 = 0
                    var mask: UInt64 = 0
                    for (k, byte) in p.prefix(8).enumerated() {
                        prefix |= UInt64(byte) << (8 * k)
                        mask |= 0xFF << (8 * k)
                    }
                    candidates.append(Candidate(prefix: prefix, mask: mask, index: Int32(i), length: Int32(p.count)))
                }
            }
            firstStart[256] = Int32(candidates.count)
            self.bytes = Self.kept(bytes)
            self.start = Self.kept(start)
            self.candidates = Self.kept(candidates)
            self.firstStart = Self.kept(firstStart)
        }

        private static func kept<T>(_ values: [T]) -> UnsafeBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: values.count)
            _ = buffer.initialize(from: values)
            return UnsafeBufferPointer(buffer)
        }
    }

    private static let table = Table()

    /// The compact form of `text` (JSON, UTF-8). Text holding a byte below 0x20 is
    /// returned as it is, so every input reads back exactly.
    static func compact(_ text: [UInt8]) -> [UInt8] {
        var compactor = Compactor()
        var out: [UInt8] = []
        text.withUnsafeBufferPointer { compactor.append(compactOf: $0, to: &out) }
        return out
    }

    /// Compacts one text after another with the same scratch space (the cache's writer
    /// thread keeps one).
    struct Compactor {
        private var cost: [Int32] = []
        private var choice: [Int8] = []

        /// Appends the compact form of `text` to `out` (`compact(_:)`'s bytes).
        ///
        /// The fewest output bytes, not the first match: a short piece (`","`) taken
        /// greedily would swallow the start of a longer one (`","model_number":"`). Costs
        /// are found from the end backwards, one pass; of pieces giving the same cost the
        /// first in the table wins, and a literal byte over any piece.
        mutating func append(compactOf t: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
            let n = t.count
            if t.contains(where: { $0 < 0x20 }) {
                out.append(contentsOf: t)
                return
            }
            if cost.count < n + 1 {
                cost = [Int32](repeating: 0, count: n + 1)
                choice = [Int8](repeating: -1, count: n)
            }
            let table = CompactRecordText.table
            let (bytes, start, candidates, firstStart) = (table.bytes, table.start, table.candidates, table.firstStart)
            let total = cost.withUnsafeMutableBufferPointer { cost in
                choice.withUnsafeMutableBufferPointer { choice in
                    cost[n] = 0
                    var i = n - 1
                    while i >= 0 {
                        var best = cost[i + 1] + 1
                        var pick: Int8 = -1
                        let b = Int(t[i])
                        var c = Int(firstStart[b])
                        let cEnd = Int(firstStart[b + 1])
                        if c < cEnd {
                            // The text's next 8 bytes (fewer at its end, zero after).
                            var word: UInt64 = 0
                            if n - i >= 8 {
                                word = UInt64(littleEndian: UnsafeRawPointer(t.baseAddress! + i).loadUnaligned(as: UInt64.self))
                            } else {
                                for k in 0..<(n - i) { word |= UInt64(t[i + k]) << (8 * k) }
                            }
                            while c < cEnd {
                                let candidate = candidates[c]
                                c += 1
                                let length = Int(candidate.length)
                                let end = i + length
                                guard word & candidate.mask == candidate.prefix, end <= n, cost[end] + 1 < best else { continue }
                                let p = Int(candidate.index)
                                let from = Int(start[p])
                                var k = 8
                                while k < length, t[i + k] == bytes[from + k] { k += 1 }
                                if k >= length {
                                    best = cost[end] + 1
                                    pick = Int8(p)
                                }
                            }
                        }
                        cost[i] = best
                        choice[i] = pick
                        i -= 1
                    }
                    return Int(cost[0])
                }
            }
            out.reserveCapacity(out.count + total + 1)
            out.append(marker)
            choice.withUnsafeBufferPointer { choice in
                var i = 0
                while i < n {
                    let p = Int(choice[i])
                    if p < 0 {
                        out.append(t[i])
                        i += 1
                    } else {
                        out.append(0x02 + UInt8(p))
                        i += Int(start[p + 1] - start[p])
                    }
                }
            }
        }
    }

    /// A part of `marker` that the compact form of any text containing `marker` holds
    /// as it is, for matching stored bytes without expanding them (nil when there is no
    /// such part: then only expanding tells).
    ///
    /// A piece can cover the start of an occurrence (a marker prefix that ends a piece),
    /// its end (a marker suffix that starts a piece), lie inside it or hold it whole.
    /// Without the longest such prefix and suffix, and with no piece inside the marker nor
    /// the marker inside a piece, what is left is written byte for byte: `"ble_wss"` leaves
    /// `wss`.
    static func literalCore(of marker: [UInt8]) -> [UInt8]? {
        let n = marker.count
        guard n > 0 else { return nil }
        for piece in pieces {
            // A piece inside the marker, or the marker inside a piece.
            let (inner, outer) = piece.count <= n ? (piece, marker) : (marker, piece)
            for i in 0...(outer.count - inner.count) where outer[i..<(i + inner.count)].elementsEqual(inner) { return nil }
        }
        var start = 0
        for piece in pieces {
            for k in stride(from: min(piece.count - 1, n), to: start, by: -1)
            where marker[0..<k].elementsEqual(piece[(piece.count - k)...]) {
                start = k
                break
            }
        }
        var end = n
        for piece in pieces {
            for k in stride(from: min(piece.count - 1, n), to: n - end, by: -1)
            where marker[(n - k)...].elementsEqual(piece[0..<k]) {
                end = n - k
                break
            }
        }
        guard start < end else { return nil }
        return Array(marker[start..<end])
    }

    /// The JSON text of a stored payload, compact or plain; nil for a compact payload
    /// holding a byte no piece stands for (corrupted).
    static func expand(_ stored: [UInt8]) -> [UInt8]? {
        guard stored.first == marker else { return stored }
        var out: [UInt8] = []
        out.reserveCapacity(stored.count * 3)
        for b in stored.dropFirst() {
            if b >= 0x20 {
                out.append(b)
            } else if b >= 0x02 {
                out.append(contentsOf: pieces[Int(b - 0x02)])
            } else {
                return nil
            }
        }
        return out
    }
}
