/// What kind of LE address a device uses. BlueZ only says "public" or "random";
/// the two top bits of a random address tell a strap that keeps its address across
/// power cycles (static) from one that rotates it (resolvable private), which
/// decides whether remembering it by address makes sense at all.
public enum AddressKind: String, Sendable, Hashable, CaseIterable {
    case `public` = "public"
    case randomStatic = "random-static"
    case resolvablePrivate = "random-resolvable"
    case nonResolvablePrivate = "random-non-resolvable"
    /// A random address whose top bits are the reserved 10 pattern, or unreadable.
    case random = "random"
    /// BlueZ did not report an address type.
    case unknown = "unknown"

    /// - Parameters:
    ///   - addressType: `Device1.AddressType` ("public" or "random").
    ///   - address: `AA:BB:CC:DD:EE:FF`, most significant byte first.
    public init(addressType: String?, address: String) {
        switch addressType {
        case "public":
            self = .public
        case "random":
            guard let msb = UInt8(address.prefix(2), radix: 16) else {
                self = .random
                return
            }
            // Core spec Vol 6 Part B 1.3.2: 11 static, 01 resolvable, 00 non-resolvable.
            switch msb >> 6 {
            case 0b11: self = .randomStatic
            case 0b01: self = .resolvablePrivate
            case 0b00: self = .nonResolvablePrivate
            default: self = .random
            }
        default:
            self = .unknown
        }
    }
}
