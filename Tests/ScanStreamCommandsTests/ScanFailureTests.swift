// SPDX-License-Identifier: MIT
import DBus
@testable import ScanStreamCommands
import Testing

@Suite("scan's exit statuses for bluetoothd's refusals of discovery")
struct ScanFailureTests {
    @Test("each refusal, sorted by the BlueZ error classifier, gets the status that names its fix")
    func statuses() {
        let cases: [(String, String, Int32, String)] = [
            ("org.freedesktop.DBus.Error.ServiceUnknown", "The name org.bluez was not provided by any .service files", 3, "systemctl start bluetooth"),
            ("org.freedesktop.DBus.Error.NameHasNoOwner", "Could not get owner of name 'org.bluez'", 3, "systemctl start bluetooth"),
            ("org.bluez.Error.NotReady", "Resource Not Ready", 5, "bluetoothctl power on"),
            ("org.bluez.Error.Failed", "Blocked through rfkill", 6, "rfkill unblock bluetooth"),
            ("org.freedesktop.DBus.Error.UnknownObject", "Method \"StartDiscovery\" doesn't exist", 4, "hci0 went away"),
            ("org.freedesktop.DBus.Error.UnknownMethod", "Unknown method", 4, "hci0 went away"),
            ("org.bluez.Error.InProgress", "Operation already in progress", 7, "refused discovery"),
            ("org.bluez.Error.Failed", "Software caused connection abort", 7, "refused discovery"),
        ]
        for (name, message, status, words) in cases {
            let failure = ScanClient.failure(DBusError(name: name, message: message), adapter: "hci0")
            #expect(failure.exit.rawValue == status, "\(name): \(message)")
            #expect(failure.message.contains(words), "\(name): \(failure.message)")
        }
    }
}
