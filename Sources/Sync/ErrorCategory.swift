// SPDX-License-Identifier: MIT

/// Which part of the gateway an error came from, as `blegate status` groups them. The sync
/// engine itself only produces `backend` (HTTP), `storage` (the outbox) and `config` (the
/// token file); the other cases exist so every subsystem reports into the same list.
public enum ErrorCategory: String, Sendable, Hashable, CaseIterable {
    case bluetooth
    case dbus
    case backend
    case storage
    case config
}
