// SPDX-License-Identifier: MIT
import BackendContract

/// A record the backend accepted, in arrival order.
public struct StoredRecord: Sendable, Equatable {
    public var id: String
    public var clientID: String?
    public var gatewayID: String
    public var deviceID: String
    public var timestamp: String
    /// The record exactly as received (id, client_id and the WearMetrics fields).
    public var json: ContractValue
}

/// A sample the samples endpoint accepted.
public struct StoredSample: Sendable, Equatable {
    public var uuid: String
    public var dataType: String
    public var value: Double
    public var json: ContractValue
}

/// A pairing code that was exchanged.
public struct Pairing: Sendable, Equatable {
    public var code: String
    public var clientID: String
    public var device: ContractValue
}

/// A workout or profile metric the backend holds (its latest form for a workout).
public struct BackendDocument: Sendable, Equatable {
    public var id: String
    public var gatewayID: String
    /// As received, last version.
    public var json: ContractValue
    /// How many times a `PUT` replaced it.
    public var replacements: Int
}

/// What the last request of a gateway said about it (`Blegate-Outbox-Depth`, `Blegate-Version`).
public struct GatewayHeaders: Sendable, Equatable {
    public var outboxDepth: Int?
    public var version: String?
}
