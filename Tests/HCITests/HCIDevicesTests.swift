import Glibc
import HCI
import Testing

@Suite("HCI-level checks")
struct HCIDevicesTests {
    @Test("addresses print most significant byte first, as bluetoothctl shows them")
    func addressOrder() {
        #expect(HCIDevices.formatAddress([0x00, 0x00, 0x00, 0x01, 0xAA, 0x00]) == "00:AA:01:00:00:00")
        #expect(HCIDevices.formatAddress([0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0x0A]) == "0A:BB:CC:DD:EE:FF")
    }

    @Test("listing controllers either works or says plainly why not")
    func listOrExplain() {
        do {
            let devices = try HCIDevices.list()
            for d in devices {
                #expect(d.name.hasPrefix("hci"))
                #expect(d.address.split(separator: ":").count == 6)
            }
        } catch {
            // A machine without Bluetooth in its kernel (CI, containers): the error must
            // name the cause and the way out, not just an errno.
            if error.errno == EAFNOSUPPORT {
                #expect(error.description.contains("no Bluetooth support"))
            } else {
                #expect(!error.description.isEmpty)
                #expect(error.description.hasPrefix(error.operation))
            }
        }
    }
}
