// SPDX-License-Identifier: MIT

/// The strap or watch a member pairs with a code (`blegate pair --device ADDR --code CODE`).
public struct PairingDevice: Sendable, Equatable {
    /// Bluetooth address (`A0:9E:1A:12:34:56`) or the stable `manufacturer:serial` id.
    public var address: String
    public var name: String?
    public var model: String?

    public init(address: String, name: String? = nil, model: String? = nil) {
        self.address = address
        self.name = name
        self.model = model
    }
}
