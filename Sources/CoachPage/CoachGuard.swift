// SPDX-License-Identifier: MIT
import Synchronization
import Timing

/// Who may use the coach page: the PIN check, the sessions it opens, their tokens against
/// cross-site forgery, and the slowing-down of guessing.
///
/// A PIN is short, so guessing is what matters: after `freeFailures` wrong PINs from one
/// address, each further try must wait twice as long as the last (1 s, 2 s, 4 s … at most
/// `maximumDelay`), and all addresses together get `globalFailures` wrong PINs per
/// `globalWindow` before everyone waits. A six-digit PIN then takes years to guess.
public final class CoachGuard: Sendable {
    public static let cookie = "blegate_coach"
    public static let freeFailures = 3
    public static let maximumDelay = 900.0
    public static let globalFailures = 30
    public static let globalWindow = 600.0
    /// A tablet stays signed in for a day of classes.
    public static let sessionSeconds = 12.0 * 3600
    static let maximumSessions = 64

    struct Session {
        var csrf: String
        var expires: Double
    }

    struct Failures {
        var count = 0
        var last = -Double.infinity
    }

    struct State {
        var sessions: [String: Session] = [:]
        var failures: [String: Failures] = [:]
        var recentFailures: [Double] = []
    }

    public enum SignIn: Sendable, Equatable {
        /// Signed in: the cookie's session token.
        case signedIn(session: String)
        case wrongPIN
        /// Too many wrong PINs: try again after this many seconds (the PIN was not checked).
        case wait(seconds: Int)
    }

    let pin: [UInt8]
    let clock: @Sendable () -> Double
    private let state = Mutex(State())

    public init(pin: String, clock: @escaping @Sendable () -> Double = MonotonicClock.seconds) {
        self.pin = Array(pin.utf8)
        self.clock = clock
    }

    public func signIn(pin attempt: String, from address: String) -> SignIn {
        let now = clock()
        return state.withLock { s in
            s.recentFailures.removeAll { now - $0 > Self.globalWindow }
            let f = s.failures[address] ?? Failures()
            let wait = max(Self.delay(failures: f.count) - (now - f.last),
                           s.recentFailures.count >= Self.globalFailures ? Self.globalWindow - (now - s.recentFailures[0]) : 0)
            if wait > 0 { return .wait(seconds: Int(wait.rounded(.up))) }
            guard Self.same(Array(attempt.utf8), pin) else {
                s.failures[address] = Failures(count: f.count + 1, last: now)
                s.recentFailures.append(now)
                if s.failures.count > 4096 { s.failures = s.failures.filter { now - $0.value.last < Self.maximumDelay } }
                return .wrongPIN
            }
            s.failures[address] = nil
            s.sessions = s.sessions.filter { $0.value.expires > now }
            if s.sessions.count >= Self.maximumSessions, let oldest = s.sessions.min(by: { $0.value.expires < $1.value.expires }) {
                s.sessions[oldest.key] = nil
            }
            let token = Self.randomToken()
            s.sessions[token] = Session(csrf: Self.randomToken(), expires: now + Self.sessionSeconds)
            return .signedIn(session: token)
        }
    }

    /// The session's token against forgery, or nil when the cookie opens no session.
    public func csrf(session: String?) -> String? {
        guard let session else { return nil }
        let now = clock()
        return state.withLock { s in
            guard let found = s.sessions[session], found.expires > now else { return nil }
            return found.csrf
        }
    }

    public func signOut(session: String?) {
        guard let session else { return }
        state.withLock { _ = $0.sessions.removeValue(forKey: session) }
    }

    /// Seconds a next try must wait after `failures` wrong PINs in a row.
    static func delay(failures: Int) -> Double {
        guard failures >= freeFailures else { return 0 }
        return min(maximumDelay, Double(1 << min(20, failures - freeFailures)))
    }

    /// Equal bytes, in time that does not depend on where they differ.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }

    /// 32 random bytes as hex (the system's generator reads getrandom).
    static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        var out = ""
        for _ in 0..<4 {
            let v = g.next() as UInt64
            let hex = String(v, radix: 16)
            out += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return out
    }
}
