#if canImport(Glibc)
import Glibc
#endif

/// Which bus to connect to.
public enum DBusBusAddress: Sendable, Hashable, CustomStringConvertible {
    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set, else the standard socket.
    case system
    /// The session bus from `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit address such as `unix:path=/tmp/bus`; `bus: false` for a
    /// peer-to-peer connection that must not send Hello.
    case address(String, bus: Bool = true)

    public static let defaultSystemAddress = "unix:path=/run/dbus/system_bus_socket"

    /// The address string, or an error naming the variable to set.
    public func resolve() throws(DBusError) -> (address: String, isBus: Bool) {
        switch self {
        case .system:
            if let env = getenv("DBUS_SYSTEM_BUS_ADDRESS"), env.pointee != 0 {
                return (String(cString: env), true)
            }
            return (Self.defaultSystemAddress, true)
        case .session:
            guard let env = getenv("DBUS_SESSION_BUS_ADDRESS"), env.pointee != 0 else {
                throw DBusError(.failed, "no session bus: DBUS_SESSION_BUS_ADDRESS is not set")
            }
            return (String(cString: env), true)
        case .address(let a, let bus):
            return (a, bus)
        }
    }

    public var description: String {
        switch self {
        case .system: "system bus"
        case .session: "session bus"
        case .address(let a, _): a
        }
    }
}
