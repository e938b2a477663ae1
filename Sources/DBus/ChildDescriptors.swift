// SPDX-License-Identifier: MIT
import CDBus
#if canImport(Glibc)
import Glibc
#endif

/// What a spawned child inherits from this process.
///
/// swift-nio opens its sockets without close-on-exec. A child spawned while this process
/// holds a listening socket keeps that socket listening after this process closes it:
/// connections are then queued where no one accepts them, and the port cannot be bound
/// again. This is how a test backend's outage never ended while a `dbus-daemon` started
/// beside it was alive. Every spawn in blegate therefore closes what it did not hand over.
public enum ChildDescriptors {
    /// Adds to `actions` a close of every descriptor from `lowest` up, in the child.
    /// Returns false where the C library cannot (glibc older than 2.34).
    @discardableResult
    public static func closeAll(from lowest: Int32, in actions: inout posix_spawn_file_actions_t) -> Bool {
        cdbus_spawn_close_from(&actions, lowest) == 0
    }
}
