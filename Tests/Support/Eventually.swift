// SPDX-License-Identifier: MIT

/// Waits until `condition` holds, checking every `every`; false when it still does not after
/// `timeout` seconds. Tests wait on what they expect with a generous timeout (a loaded CI
/// machine is slow) instead of sleeping for a guessed time and then asserting.
public func eventually(timeout: Double, every: Duration = .milliseconds(100),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: every)
    }
    return try await condition()
}

/// `eventually(timeout:)` that throws `EventuallyTimedOut` naming `what` instead of
/// returning false, for waits that end a test when they fail.
public func eventually(_ what: String, seconds: Double = 20, every: Duration = .milliseconds(50),
                       _ condition: () async throws -> Bool) async throws {
    guard try await eventually(timeout: seconds, every: every, condition) else { throw EventuallyTimedOut(what: what, seconds: seconds) }
}

/// Runs `body` and fails with `EventuallyTimedOut` naming `what` instead of hanging when
/// it does not finish within `seconds` (for an awaited event: a reply, a signal, a flush).
public func withTimeout<T: Sendable>(_ seconds: Double = 30, _ what: String = "the awaited work",
                                     _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw EventuallyTimedOut(what: what, seconds: seconds)
        }
        group.cancelAll()
        return value
    }
}

public struct EventuallyTimedOut: Error, CustomStringConvertible {
    public var what: String
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s waiting for \(what)" }
}
