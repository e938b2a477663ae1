/// Why a `BlueZMirror.waitFor` ended without its condition.
public enum BlueZMirrorError: Error, Sendable, Hashable {
    case timedOut
    case cancelled
    /// `stop()` was called (or the mirror was never started).
    case stopped
}
