#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Timing

/// One value the simulator put on the bus (or into an AcquireNotify socket).
public struct PayloadRecord: Sendable, Hashable {
    public enum Delivery: String, Sendable {
        /// `Value` PropertiesChanged after StartNotify.
        case notify
        /// One write into an AcquireNotify socket.
        case acquire
    }

    /// Per-device sequence number of sent Heart Rate values (0-based).
    public var sequence: Int
    public var address: String
    public var object: String
    public var uuid: String
    public var bytes: [UInt8]
    public var delivery: Delivery
    public var malformed: Bool
    public var monotonicMilliseconds: Double
    public var wallMilliseconds: Int64

    /// One JSON object on one line; keys are fixed so scripts can grep them.
    public var jsonLine: String {
        let mono = (monotonicMilliseconds * 1000).rounded() / 1000
        return "{\"seq\":\(sequence),\"address\":\"\(address)\",\"object\":\"\(object)\",\"uuid\":\"\(uuid)\","
            + "\"hex\":\"\(bytes.hexString)\",\"path\":\"\(delivery.rawValue)\",\"malformed\":\(malformed),"
            + "\"mono_ms\":\(mono),\"wall_ms\":\(wallMilliseconds)}"
    }
}

/// One new heart-rate value a strap put in its advertisements (Polar's block of
/// company 0x006B): logged once per strap and value, however many adapters hear it.
public struct AdvertRecord: Sendable, Hashable {
    public var address: String
    /// The block's frame counter (0-7).
    public var counter: Int
    /// The slow average, which Polar's apps show (and a notification carries).
    public var heartRate: Int
    public var fastHeartRate: Int
    /// The manufacturer data after the company ID.
    public var bytes: [UInt8]
    /// When the value went out: the first scan tick at or after `dueMilliseconds`.
    public var monotonicMilliseconds: Double
    public var wallMilliseconds: Int64
    /// When the strap's measurement was due (monotonic ms). Values are due a period
    /// apart; a machine that stalled past a whole period restarts the schedule at the
    /// tick that renewed the value (`dueMilliseconds == monotonicMilliseconds`).
    public var dueMilliseconds: Double

    /// One JSON line; `"kind":"advert"` tells it from a notification line (which has no `kind`).
    public var jsonLine: String {
        let mono = (monotonicMilliseconds * 1000).rounded() / 1000
        return "{\"kind\":\"advert\",\"address\":\"\(address)\",\"counter\":\(counter),\"hr\":\(heartRate),"
            + "\"fast_hr\":\(fastHeartRate),\"hex\":\"\(bytes.hexString)\",\"mono_ms\":\(mono),\"wall_ms\":\(wallMilliseconds)}"
    }
}

/// The record of every payload sent, so a test can prove that what the gateway
/// reports equals what the "straps" sent. Written as JSON lines; also kept in
/// memory (bounded) for in-process tests.
public final class PayloadLog: Sendable {
    private struct State {
        var file: UnsafeMutablePointer<FILE>?
        var lastFlush: Double = 0
        var records: [PayloadRecord] = []
        var adverts: [AdvertRecord] = []
    }

    public let path: String?
    private let state: Mutex<State>
    private let memoryLimit: Int

    /// - Parameter path: file to append to (truncated at start); nil keeps memory only.
    public init(path: String?, memoryLimit: Int = 200_000) throws(SimulatorError) {
        self.path = path
        self.memoryLimit = memoryLimit
        var s = State()
        if let path {
            guard let f = fopen(path, "w") else {
                throw SimulatorError("cannot open payload log \(path): \(String(cString: strerror(errno)))")
            }
            s.file = f
        }
        state = Mutex(s)
    }

    deinit {
        state.withLock { s in
            if let f = s.file { fclose(f) }
            s.file = nil
        }
    }

    func append(_ record: PayloadRecord) {
        let line = record.jsonLine + "\n"
        state.withLock { s in
            s.records.append(record)
            if s.records.count > memoryLimit { s.records.removeFirst(memoryLimit / 4) }
            Self.write(line, &s)
        }
    }

    /// Flushes at most every 20 ms: tests read the file while the simulator runs,
    /// benchmarks at thousands of notifications a second must not pay a write each.
    private static func write(_ line: String, _ s: inout State) {
        guard let f = s.file else { return }
        fputs(line, f)
        let now = MonotonicClock.seconds() * 1000
        if now - s.lastFlush >= 20 {
            fflush(f)
            s.lastFlush = now
        }
    }

    func appendAdvert(_ record: AdvertRecord) {
        let line = record.jsonLine + "\n"
        state.withLock { s in
            s.adverts.append(record)
            if s.adverts.count > memoryLimit { s.adverts.removeFirst(memoryLimit / 4) }
            Self.write(line, &s)
        }
    }

    public func flush() {
        state.withLock { s in
            if let f = s.file { fflush(f) }
            s.lastFlush = MonotonicClock.seconds() * 1000
        }
    }

    public func close() {
        state.withLock { s in
            if let f = s.file { fclose(f) }
            s.file = nil
        }
    }

    /// Advertised heart-rate values kept in memory, oldest first, optionally for one address.
    public func adverts(address: String? = nil) -> [AdvertRecord] {
        state.withLock { s in
            guard let address else { return s.adverts }
            return s.adverts.filter { $0.address == address }
        }
    }

    /// Notification records kept in memory, oldest first, optionally for one device address.
    public func records(address: String? = nil) -> [PayloadRecord] {
        state.withLock { s in
            guard let address else { return s.records }
            return s.records.filter { $0.address == address }
        }
    }
}

/// A simulator-side failure (bad flag, unwritable log): the CLI prints it and exits 1.
public struct SimulatorError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
