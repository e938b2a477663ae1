// SPDX-License-Identifier: MIT
import LinkPolicy
import Testing

@Suite("Connect failures sorted by kind")
struct ConnectFailureTests {
    @Test("BlueZ's everyday errors, as 5.66 words them")
    func classification() {
        let cases: [(String, String, ConnectFailureKind)] = [
            ("org.bluez.Error.Failed", "le-connection-abort-by-local", .abortByLocal),
            ("org.bluez.Error.InProgress", "In Progress", .inProgress),
            ("org.bluez.Error.Failed", "Operation already in progress", .inProgress),
            ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .timeout),
            ("org.bluez.Error.Failed", "Connection Rejected due to Limited Resources (0x0d)", .noResources),
            ("org.bluez.Error.Failed", "Connection Limit Exceeded (0x09)", .noResources),
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
        ReconnectTracker(policy: BackoffPolicy(jitter: 0), stableAfter: stableAfter, flapWindow: 600, flapThreshold: 3, seed: 1)
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

@Suite("Connection slots")
struct ConnectionSlotsTests {
    @Test("a rejection lowers the limit to what was held; a quiet spell probes one higher")
    func learning() {
        var s = ConnectionSlots(configured: 7, probeAfter: 600)
        for _ in 0..<4 {
            let got = s.acquire()
            #expect(got)
        }
        s.rejected(at: 1000)
        #expect(s.limit == 4)
        let extra = s.acquire()
        #expect(!extra, "full at the learned limit")
        s.probe(now: 1300)
        #expect(s.limit == 4, "too soon")
        s.probe(now: 1600)
        #expect(s.limit == 5)
        let probed = s.acquire()
        #expect(probed)
        s.release()
        s.release()
        #expect(s.inUse == 3)
    }

    @Test("never below one slot, never above the configured number")
    func bounds() {
        var s = ConnectionSlots(configured: 2, probeAfter: 1)
        s.rejected(at: 0)
        #expect(s.limit == 1)
        for t in 1...10 { s.probe(now: Double(t) * 2) }
        #expect(s.limit == 2)
        #expect(ConnectionSlots(configured: 0).limit == 1)
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
