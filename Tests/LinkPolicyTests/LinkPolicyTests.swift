// SPDX-License-Identifier: MIT
import LinkPolicy
import Testing
import Timing

@Suite("Connect failures sorted by kind")
struct ConnectFailureTests {
    @Test("BlueZ's everyday errors, as 5.66 words them")
    func classification() {
        let cases: [(String, String, ConnectFailureKind)] = [
            ("org.bluez.Error.Failed", "le-connection-abort-by-local", .abortByLocal),
            ("org.bluez.Error.InProgress", "In Progress", .inProgress),
            ("org.bluez.Error.Failed", "Operation already in progress", .inProgress),
            ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .timeout),
            ("org.bluez.Error.Failed", "le-connection-adapter-not-powered", .notReady),
            ("org.bluez.Error.NotConnected", "Not Connected", .abortByLocal),
            ("org.bluez.Error.NotReady", "Resource Not Ready", .notReady),
            ("org.freedesktop.DBus.Error.UnknownObject", "Method \"Connect\" with signature \"\" on interface \"org.bluez.Device1\" doesn't exist", .deviceGone),
            ("org.bluez.Error.Failed", "Software caused connection abort", .failed),
            ("org.bluez.Error.AuthenticationFailed", "", .other),
        ]
        for (name, message, kind) in cases {
            #expect(ConnectFailureKind.classify(errorName: name, message: message) == kind, "\(name): \(message)")
        }
    }
}

@Suite("Reconnect pacing")
struct ReconnectTrackerTests {
    /// No jitter, so delays are exact.
    func tracker(stableAfter: Double = 10) -> ReconnectTracker {
        ReconnectTracker(policy: ReconnectPacing(jitter: 0), stableAfter: stableAfter, flapWindow: 600, flapThreshold: 3, seed: 1)
    }

    @Test("each kind has its own pace; delays double up to the cap")
    func perKind() {
        var t = tracker()
        #expect(t.nextDelay(now: 0) == 0)
        t.failed(.abortByLocal)
        #expect(t.nextDelay(now: 0) == 1)
        t.failed(.abortByLocal)
        #expect(t.nextDelay(now: 0) == 2)
        for _ in 0..<10 { t.failed(.abortByLocal) }
        #expect(t.nextDelay(now: 0) == 30)
        t.failed(.timeout)
        #expect(t.nextDelay(now: 0) == 120, "timeouts are capped at 2 min")
        var fresh = tracker()
        fresh.failed(.timeout)
        #expect(fresh.nextDelay(now: 0) == 5)
    }

    @Test("InProgress is our own attempt: it waits briefly and does not grow the count")
    func inProgress() {
        var t = tracker()
        t.failed(.inProgress)
        t.failed(.inProgress)
        #expect(t.consecutiveFailures == 0)
        #expect(t.nextDelay(now: 0) == 0.5)
    }

    @Test("a stable link resets the backoff; brief links do not, and three of them are flapping")
    func flapping() {
        var t = tracker()
        t.failed(.abortByLocal)
        t.failed(.abortByLocal)
        t.linkUp(at: 100)
        let flap1 = t.linkDown(at: 103)
        #expect(flap1, "3 s is a flap")
        #expect(t.consecutiveFailures == 3, "the brief success did not reset the count")
        #expect(!t.isFlapping(now: 103))
        t.linkUp(at: 110)
        let flap2 = t.linkDown(at: 112)
        #expect(flap2)
        t.linkUp(at: 120)
        let flap3 = t.linkDown(at: 121)
        #expect(flap3)
        #expect(t.isFlapping(now: 121))
        // 1 × 2^(5-1) = 16 s, × 4 while flapping = 64 s.
        #expect(t.nextDelay(now: 121) == 64)
        t.linkUp(at: 200)
        let flap4 = t.linkDown(at: 260)
        #expect(!flap4, "a minute up is stable")
        #expect(t.consecutiveFailures == 0)
        #expect(t.nextDelay(now: 260) == 0)
        #expect(!t.isFlapping(now: 121 + 601), "flaps age out of the window")
    }

    @Test("a loss that is not the strap's fault (bluetoothd restart) is neither a flap nor a success")
    func notDeviceFault() {
        var t = tracker()
        t.failed(.abortByLocal)
        t.linkUp(at: 0)
        let flap5 = t.linkDown(at: 1, deviceFault: false)
        #expect(!flap5)
        #expect(t.flaps.isEmpty)
        #expect(t.consecutiveFailures == 1)
    }

    @Test("jitter stays within ±20 % and is reproducible for a seed")
    func jitter() {
        var a = ReconnectTracker(seed: 7)
        var b = ReconnectTracker(seed: 7)
        for _ in 0..<4 {
            a.failed(.failed)
            b.failed(.failed)
        }
        for _ in 0..<50 {
            let x = a.nextDelay(now: 0)
            #expect(x == b.nextDelay(now: 0))
            #expect(x >= 16 * 0.8 && x <= 16 * 1.2)
        }
    }
}

@Suite("Device selection")
struct DeviceSelectionTests {
    @Test("auto follows heart-rate devices; deny wins; allow adds others")
    func auto() {
        let s = DeviceSelection(mode: .auto, allow: ["Wahoo KICKR*"], deny: ["A0:9E:1A:00:00:02", "Forerunner*"])
        #expect(s.accepts(address: "A0:9E:1A:00:00:01", name: "Polar H10 1", isHeartRate: true))
        #expect(!s.accepts(address: "a0:9e:1a:00:00:02", name: "Polar H10 2", isHeartRate: true))
        #expect(!s.accepts(address: "C0:00:00:00:00:01", name: "Forerunner 255", isHeartRate: true))
        #expect(s.accepts(address: "C0:00:00:00:00:02", name: "Wahoo KICKR 1234", isHeartRate: false))
        #expect(!s.accepts(address: "C0:00:00:00:00:03", name: "Some speaker", isHeartRate: false))
    }

    @Test("list mode follows only the allow list; addresses match in any case, names by pattern")
    func list() {
        let s = DeviceSelection(mode: .list, allow: ["a0:9e:1a:00:00:01", "TICKR *", "*H6*"])
        #expect(s.accepts(address: "A0:9E:1A:00:00:01", name: nil, isHeartRate: false))
        #expect(s.accepts(address: "C0:00:00:00:00:01", name: "TICKR 1A2B", isHeartRate: true))
        #expect(s.accepts(address: "C0:00:00:00:00:02", name: "COOSPO H6 0123", isHeartRate: true))
        #expect(!s.accepts(address: "C0:00:00:00:00:03", name: "Polar H10", isHeartRate: true))
        #expect(!s.accepts(address: "C0:00:00:00:00:04", name: nil, isHeartRate: true))
    }

    @Test("patterns: * matches any run, the rest literally")
    func patterns() {
        #expect(DeviceSelection.matches("*", address: "X", name: ""))
        #expect(DeviceSelection.matches("Polar*", address: "X", name: "Polar H10 8C4F2A1B"))
        #expect(!DeviceSelection.matches("Polar", address: "X", name: "Polar H10"))
        #expect(DeviceSelection.matches("*H10*", address: "X", name: "Polar H10 8C"))
        #expect(DeviceSelection.matches("a*b*c", address: "X", name: "aXXbYYc"))
        #expect(!DeviceSelection.matches("a*b*c", address: "X", name: "aXXbYY"))
        #expect(DeviceSelection.isAddress("A0:9E:1A:00:00:01"))
        #expect(!DeviceSelection.isAddress("A0:9E:1A:00:00"))
        #expect(!DeviceSelection.isAddress("Polar H10"))
    }
}

@Suite("Adapter self-healing policy")
struct AdapterHealthTests {
    let settings = AdapterHealth.Settings(silentScanAfter: 120, abortBurst: 3, abortWindow: 180, cooldown: 180)

    @Test("a silent scan with straps waiting and none streaming is a stall; a quiet room is not")
    func silentScan() {
        var h = AdapterHealth(settings: settings)
        h.scanning(true, at: 0)
        #expect(h.evaluate(now: 119, waiting: 2, streaming: 0, canReset: false) == nil)
        #expect(h.evaluate(now: 130, waiting: 0, streaming: 0, canReset: false) == nil, "nobody waiting: nothing to fix")
        #expect(h.evaluate(now: 130, waiting: 2, streaming: 1, canReset: false) == nil, "a link streams: the controller works")
        let first = h.evaluate(now: 130, waiting: 2, streaming: 0, canReset: false)
        #expect(first?.0 == .powerCycle)
        #expect(first?.1 == .silentScan)
        #expect(h.powerCycles == 1)
        #expect(h.evaluate(now: 200, waiting: 2, streaming: 0, canReset: false) == nil, "cool-down")
    }

    @Test("an advertisement restarts the silence clock")
    func advertisementsCount() {
        var h = AdapterHealth(settings: settings)
        h.scanning(true, at: 0)
        h.advertisement(at: 100)
        #expect(h.evaluate(now: 150, waiting: 1, streaming: 0, canReset: true) == nil)
        #expect(h.evaluate(now: 221, waiting: 1, streaming: 0, canReset: true) != nil)
    }

    @Test("repeated aborts are a stall; a success clears them; other failures do not count")
    func aborts() {
        var h = AdapterHealth(settings: settings)
        h.connectFailed(.abortByLocal, at: 1)
        h.connectFailed(.timeout, at: 2)
        h.connectFailed(.inProgress, at: 3)
        h.connectFailed(.gattMissing, at: 3)
        #expect(h.evaluate(now: 4, waiting: 1, streaming: 0, canReset: false) == nil)
        h.connected(at: 5)
        h.connectFailed(.abortByLocal, at: 6)
        #expect(h.evaluate(now: 7, waiting: 1, streaming: 0, canReset: false) == nil, "the success cleared the first two")
        h.connectFailed(.abortByLocal, at: 8)
        h.connectFailed(.abortByLocal, at: 9)
        let r = h.evaluate(now: 10, waiting: 1, streaming: 0, canReset: false)
        #expect(r?.1 == .connectAborts)
    }

    @Test("ladder: power-cycle, then HCI reset when allowed, then power-cycle; progress starts over")
    func ladder() {
        var h = AdapterHealth(settings: settings)
        h.scanning(true, at: 0)
        #expect(h.evaluate(now: 200, waiting: 1, streaming: 0, canReset: true)?.0 == .powerCycle)
        #expect(h.evaluate(now: 400, waiting: 1, streaming: 0, canReset: true)?.0 == .hciReset)
        #expect(h.evaluate(now: 600, waiting: 1, streaming: 0, canReset: true)?.0 == .powerCycle)
        #expect(h.hciResets == 1)
        #expect(h.powerCycles == 2)
        var noReset = AdapterHealth(settings: settings)
        noReset.scanning(true, at: 0)
        #expect(noReset.evaluate(now: 200, waiting: 1, streaming: 0, canReset: false)?.0 == .powerCycle)
        #expect(noReset.evaluate(now: 400, waiting: 1, streaming: 0, canReset: false)?.0 == .powerCycle, "no CAP_NET_ADMIN: power-cycle again")
        noReset.advertisement(at: 450)
        #expect(noReset.evaluate(now: 700, waiting: 1, streaming: 0, canReset: true)?.0 == .powerCycle, "it worked once: start the ladder over")
    }
}

@Suite("BlueZ error classifier")
struct BlueZErrorKindTests {
    @Test("names and 5.66 messages")
    func kinds() {
        let cases: [(String, String, BlueZErrorKind)] = [
            ("org.bluez.Error.InProgress", "Operation already in progress", .inProgress),
            ("org.bluez.Error.Failed", "Operation already in progress", .inProgress),
            ("org.bluez.Error.Failed", "le-connection-abort-by-local", .abortByLocal),
            ("org.bluez.Error.Failed", "No discovery started", .noDiscoveryStarted),
            ("org.bluez.Error.NotPermitted", "Notify acquired", .notifyAcquired),
            ("org.bluez.Error.NotPermitted", "Read not permitted", .notPermitted),
            ("org.bluez.Error.Failed", "Not connected", .notConnected),
            ("org.bluez.Error.NotConnected", "Not Connected", .notConnected),
            ("org.bluez.Error.NotSupported", "Operation is not supported", .notSupported),
            ("org.freedesktop.DBus.Error.ServiceUnknown", "The name org.bluez was not provided", .noBluetoothd),
            ("org.freedesktop.DBus.Error.NameHasNoOwner", "Could not get owner of name 'org.bluez': no such name", .noBluetoothd),
            ("org.freedesktop.DBus.Error.UnknownObject", "Method \"StartDiscovery\" with signature \"\" on interface \"org.bluez.Adapter1\" doesn't exist", .doesNotExist),
            ("org.bluez.Error.Failed", "Blocked through rfkill", .rfkillBlocked),
            ("org.bluez.Error.NotReady", "Resource Not Ready", .notReady),
            ("org.bluez.Error.DoesNotExist", "Does Not Exist", .doesNotExist),
            ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .timeout),
            ("org.bluez.Error.Failed", "Connection Limit Exceeded (0x09)", .failed),
            ("org.bluez.Error.AlreadyExists", "Already Exists", .alreadyExists),
            ("org.example.Other", "", .other),
        ]
        for (name, message, kind) in cases {
            #expect(BlueZErrorKind.classify(name: name, message: message) == kind, "\(name): \(message)")
        }
    }
}

@Suite("Links that deliver are kept")
struct DeliveredLinkTests {
    @Test("a short link that delivered data is a success: no backoff, no flap")
    func delivered() {
        var t = ReconnectTracker(policy: ReconnectPacing(jitter: 0), stableAfter: 10, flapWindow: 600, flapThreshold: 3, seed: 1)
        t.failed(.abortByLocal)
        t.failed(.abortByLocal)
        for i in 0..<5 {
            t.linkUp(at: Double(i * 10))
            let flap = t.linkDown(at: Double(i * 10) + 8, delivered: true)
            #expect(!flap)
            let delay = t.nextDelay(now: Double(i * 10) + 8)
            #expect(delay == 0)
        }
        #expect(!t.isFlapping(now: 50))
        #expect(t.consecutiveFailures == 0)
        t.linkUp(at: 100)
        let flap = t.linkDown(at: 101, delivered: false)
        #expect(flap, "a link that brought nothing is a flap")
        let delay = t.nextDelay(now: 101)
        #expect(delay == 1)
    }
}
