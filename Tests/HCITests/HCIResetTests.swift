// SPDX-License-Identifier: MIT
import Glibc
import HCI
import Testing

@Suite("HCI reset and CAP_NET_ADMIN")
struct HCIResetTests {
    @Test("CapEff is read from /proc/PID/status; bit 12 is CAP_NET_ADMIN")
    func parseCapEff() throws {
        let root = try ProcessCapabilities.parse(status: "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n")
        #expect(root.hasNetAdmin)
        let netAdminOnly = try ProcessCapabilities.parse(status: "CapEff:\t0000000000001000\n")
        #expect(netAdminOnly.hasNetAdmin)
        #expect(netAdminOnly.effective == 0x1000)
        let none = try ProcessCapabilities.parse(status: "CapPrm:\t0000000000001000\nCapEff:\t0000000000000000\n")
        #expect(!none.hasNetAdmin)
        // CAP_NET_RAW (13) and CAP_NET_BIND_SERVICE (10) are not CAP_NET_ADMIN.
        #expect(!(try ProcessCapabilities.parse(status: "CapEff:\t0000000000002400\n")).hasNetAdmin)
    }

    @Test("a status text without a readable CapEff is an error that says so")
    func badStatus() {
        #expect(throws: CapabilityError.self) { try ProcessCapabilities.parse(status: "Name:\tx\n") }
        do {
            _ = try ProcessCapabilities.parse(status: "CapEff:\tzz\n")
            Issue.record("parsed a non-hex CapEff")
        } catch {
            #expect(error.message.contains("CapEff"))
        }
    }

    @Test("the running process's capabilities are readable")
    func current() throws {
        let caps = try ProcessCapabilities.current()
        // CapEff is never wider than CapBnd; both come from the same file, so check the
        // parse against the kernel's own statement of the bounding set.
        var bnd: UInt64 = 0
        let f = try #require(fopen("/proc/self/status", "r"))
        defer { fclose(f) }
        var buf = [CChar](repeating: 0, count: 512)
        while fgets(&buf, Int32(buf.count), f) != nil {
            let line = String(decoding: buf[0..<strlen(buf)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if line.hasPrefix("CapBnd:") { bnd = UInt64(line.dropFirst(7).filter(\.isHexDigit), radix: 16) ?? 0 }
        }
        #expect(caps.effective & ~bnd == 0)
    }

    @Test("interface names map to device ids")
    func deviceIDs() {
        #expect(HCIAdapterReset.deviceID(interfaceName: "hci0") == 0)
        #expect(HCIAdapterReset.deviceID(interfaceName: "hci12") == 12)
        #expect(HCIAdapterReset.deviceID(interfaceName: "hci") == nil)
        #expect(HCIAdapterReset.deviceID(interfaceName: "wlan0") == nil)
        #expect(HCIAdapterReset.deviceID(interfaceName: "hci-1") == nil)
        #expect(HCIAdapterReset.deviceID(interfaceName: "hci99999999") == nil)
    }

    /// hci15 (HCI_MAX_DEV - 1) exists on no machine this runs on; a reset of it must
    /// fail, and the error must say why in words: no Bluetooth in the kernel (CI,
    /// containers), no permission, or no such controller.
    @Test("resetting a controller that cannot be reset fails with the reason and the way out", arguments: HCIAdapterReset.Method.allCases)
    func resetFailsClearly(method: HCIAdapterReset.Method) {
        do {
            try HCIAdapterReset.reset(id: 15, method: method)
            Issue.record("reset of hci15 succeeded")
        } catch {
            let text = error.description
            #expect(text.hasPrefix("resetting hci15 ("))
            switch error.errno {
            case EAFNOSUPPORT:
                #expect(error.step == .openSocket)
                #expect(text.contains("no Bluetooth support"))
            case EPERM, EACCES:
                #expect(error.isPermissionDenied)
                #expect(text.contains("CAP_NET_ADMIN"))
            case ENODEV:
                #expect(text.contains("no controller hci15"))
            default:
                Issue.record("unexpected failure: \(text)")
            }
        }
    }
}
