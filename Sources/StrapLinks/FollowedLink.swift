// SPDX-License-Identifier: MIT
import DBus

/// What `StrapManager` follows: a strap (`StrapLink`) or a scale (`ScaleLink`).
protocol FollowedLink: AnyObject, Sendable {
    var address: String { get }
    var signals: SignalBox { get }
    var snapshot: LinkStatus { get }
    var devicePath: DBusObjectPath? { get }
    func run() async
    func release(disconnect: Bool) async
    func stopped()
    /// An advertisement of this device was heard (scales are linked only then).
    func heard()
}

extension FollowedLink {
    /// Straps have their own ways to learn they are heard (the scheduler's plan).
    func heard() {}
}

extension StrapLink: FollowedLink {}
