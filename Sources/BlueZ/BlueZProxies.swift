// SPDX-License-Identifier: MIT
import DBus

/// Typed calls on bluetoothd's objects, one type per interface (doc/device-api.txt,
/// doc/adapter-api.txt, doc/gatt-api.txt), so the link code says what it means instead
/// of spelling member names. Errors are BlueZ's own replies: sort them with
/// `BlueZErrorKind.classify` (LinkPolicy).
public struct BlueZDevice: Sendable {
    public let connection: DBusConnection
    public let path: DBusObjectPath

    public init(_ connection: DBusConnection, _ path: DBusObjectPath) {
        self.connection = connection
        self.path = path
    }

    public func connect(timeout: Duration) async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.device, member: "Connect", timeout: timeout)
    }

    public func disconnect(timeout: Duration = .seconds(10)) async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.device, member: "Disconnect", timeout: timeout)
    }

    /// Asks bluetoothd itself (not a mirror) whether the device is connected.
    public func isConnected(timeout: Duration = .seconds(5)) async throws(DBusError) -> Bool {
        let reply = try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZMirror.properties, member: "Get",
                                              [.string(BlueZInterface.device), .string("Connected")], timeout: timeout)
        return reply.first?.boolValue == true
    }
}

public struct BlueZAdapter: Sendable {
    public let connection: DBusConnection
    public let path: DBusObjectPath

    public init(_ connection: DBusConnection, _ path: DBusObjectPath) {
        self.connection = connection
        self.path = path
    }

    /// LE only: a gym gateway has no use for BR/EDR inquiry, which also slows LE scanning.
    /// `duplicateData`: whether every advertisement is reported (RSSI and advertised data
    /// kept live) or only changes; nil leaves bluetoothd's default.
    public func setLEDiscoveryFilter(duplicateData: Bool? = nil) async throws(DBusError) {
        var filter: [(String, DBusValue)] = [("Transport", .string("le"))]
        if let duplicateData { filter.append(("DuplicateData", .bool(duplicateData))) }
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.adapter, member: "SetDiscoveryFilter",
                                  [.properties(filter)])
    }

    public func startDiscovery() async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.adapter, member: "StartDiscovery")
    }

    public func stopDiscovery() async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.adapter, member: "StopDiscovery")
    }

    public func removeDevice(_ device: DBusObjectPath) async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.adapter, member: "RemoveDevice",
                                  [.objectPath(device)])
    }

    public func setPowered(_ on: Bool) async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZMirror.properties, member: "Set",
                                  [.string(BlueZInterface.adapter), .string("Powered"), .variant(.bool(on))])
    }
}

public struct BlueZCharacteristic: Sendable {
    public let connection: DBusConnection
    public let path: DBusObjectPath

    public init(_ connection: DBusConnection, _ path: DBusObjectPath) {
        self.connection = connection
        self.path = path
    }

    /// The notification socket (SOCK_SEQPACKET, one value per datagram), or nil when
    /// the reply carried none.
    public func acquireNotify() async throws(DBusError) -> DBusFileDescriptor? {
        let reply = try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.characteristic,
                                              member: "AcquireNotify", [.dictionary(key: "s", value: "v", [])])
        guard case .unixFD(let fd)? = reply.first else { return nil }
        return fd
    }

    public func startNotify() async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.characteristic, member: "StartNotify")
    }

    public func stopNotify(timeout: Duration = .seconds(5)) async throws(DBusError) {
        try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.characteristic, member: "StopNotify",
                                  timeout: timeout)
    }

    public func readValue(timeout: Duration = .seconds(10)) async throws(DBusError) -> [UInt8] {
        let reply = try await connection.call(destination: BlueZMirror.busName, path: path, interface: BlueZInterface.characteristic,
                                              member: "ReadValue", [.dictionary(key: "s", value: "v", [])], timeout: timeout)
        return reply.first?.bytesValue ?? []
    }
}

/// bluetoothd's interface names.
public enum BlueZInterface {
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let characteristic = "org.bluez.GattCharacteristic1"
}
