import DBus

/// The error replies bluetoothd 5.66 sends, with its exact names and messages
/// (clients match on both, e.g. "No discovery started").
enum BlueZError {
    static func notReady() -> DBusError { DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready") }
    static func inProgress() -> DBusError { DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress") }
    static func failed(_ message: String) -> DBusError { DBusError(name: "org.bluez.Error.Failed", message: message) }
    static func doesNotExist() -> DBusError { DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist") }
    static func invalidArguments(_ message: String = "Invalid arguments in method call") -> DBusError {
        DBusError(name: "org.bluez.Error.InvalidArguments", message: message)
    }
    static func notSupported() -> DBusError { DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported") }
    static func notPermitted(_ message: String) -> DBusError { DBusError(name: "org.bluez.Error.NotPermitted", message: message) }
    static func notConnected() -> DBusError { DBusError(name: "org.bluez.Error.NotConnected", message: "Not Connected") }
    static func alreadyExists() -> DBusError { DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists") }
    static func notAvailable(_ message: String) -> DBusError { DBusError(name: "org.bluez.Error.NotAvailable", message: message) }
    static func notAuthorized() -> DBusError { DBusError(name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized") }

    /// LE connection failures carry the errno-derived reason as the message.
    static let leAbortByLocal = "le-connection-abort-by-local"
}
