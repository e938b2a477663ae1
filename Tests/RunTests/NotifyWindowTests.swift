// SPDX-License-Identifier: MIT
import BlegateTestSupport
import BlegateRun
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Notifications gather 500 ms while no wall screen watches and 200 ms while one does
/// (`LinkConfiguration.unwatchedNotifyGather`, `watchedNotifyGather`): a screen that
/// connects narrows the window at once, and the last one leaving widens it again.
@Suite("blegate run: the notification window follows the wall's screens")
struct NotifyWindowTests {
    @Test("500 ms with no screen, 200 ms while one reads /events, 500 ms again after it leaves", .timeLimit(.minutes(4)))
    func followsScreens() async throws {
        try await withSimulator({ c in
            c.straps = 3
            c.rate = 2
        }) { bus, _ in
            let f = try RunFixture()
            let port = try freeLoopbackPort()
            try f.writeConfig(backendURL: nil, extra: "[display]\nlisten = \"127.0.0.1:\(port)\"\n")
            let run = try await f.run(bus: bus.address)
            defer { run.signal(SIGKILL) }
            // The status socket answers once the gateway is ready.
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            var seen: Int?
            func window() async -> Int? {
                seen = (try? await f.status())?.notifyWindowMilliseconds
                return seen
            }

            #expect(await eventually(timeout: 60) { await window() == 500 }, "no screen: \(String(describing: seen))")
            // A screen: a client holding the wall's event stream open.
            let screen = try await BackgroundProcess.start("""
                /usr/bin/python3 -c 'import urllib.request
                r = urllib.request.urlopen("http://127.0.0.1:\(port)/events", timeout=60)
                for line in r:
                    pass'
                """)
            defer { screen.signal(SIGKILL) }
            #expect(await eventually(timeout: 60) { await window() == 200 }, "a screen: \(String(describing: seen))")
            let text = await f.cli("status").out
            #expect(text.contains("notifications gather up to 200 ms (a wall screen watches)"), "\(text)")
            screen.signal(SIGKILL)
            _ = await screen.wait(timeout: 30)
            #expect(await eventually(timeout: 60) { await window() == 500 }, "the screen gone: \(String(describing: seen))")
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")
        }
    }
}
