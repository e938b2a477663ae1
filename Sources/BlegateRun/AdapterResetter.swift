// SPDX-License-Identifier: MIT
import HCI

/// The last rung of the self-healing ladder (docs/gateway.md): an HCI reset of a stalled
/// adapter. Offered to the connection manager only when the configuration allows it and
/// the process holds CAP_NET_ADMIN (the systemd drop-in grants it); otherwise the manager
/// keeps to power-cycles through BlueZ.
public enum AdapterResetter {
    /// The reset closure, or nil with the reason it is not offered.
    public static func make(allowed: Bool) -> (reset: (@Sendable (String) async throws -> Void)?, reason: String?) {
        guard allowed else { return (nil, "adapter_reset is off in the configuration") }
        let capabilities: ProcessCapabilities
        do {
            capabilities = try ProcessCapabilities.current()
        } catch {
            return (nil, "cannot read this process's capabilities: \(error)")
        }
        guard capabilities.hasNetAdmin else {
            return (nil, "adapter_reset is on but the process lacks CAP_NET_ADMIN (install the adapter-reset.conf drop-in)")
        }
        return ({ name in
            guard let id = HCIAdapterReset.deviceID(interfaceName: name) else {
                throw HCIAdapterResetUnknown(name: name)
            }
            try HCIAdapterReset.reset(id: id)
        }, nil)
    }
}

struct HCIAdapterResetUnknown: Error, CustomStringConvertible {
    var name: String
    var description: String { "no HCI device for adapter \(name)" }
}
