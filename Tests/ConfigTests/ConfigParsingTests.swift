// SPDX-License-Identifier: MIT
import Config
import Foundation
import Testing

@Suite("Configuration parsing")
struct ConfigParsingTests {
    @Test("an empty file is all defaults")
    func defaults() throws {
        let c = try GatewayConfiguration.parse(toml: "")
        #expect(c == GatewayConfiguration())
        #expect(c.gateway.stateDirectory == "/var/lib/blegate")
        #expect(c.cacheFilePath == "/var/lib/blegate/cache.sqlite")
        #expect(c.cache.retention == .seconds(7 * 86_400))
        #expect(c.cache.maxSize == 512 * 1_048_576)
        #expect(c.backend.url == nil)
        #expect(c.backend.batchSize == 500)
        #expect(c.backend.unpaired == .send)
        #expect(c.hrv.windows == [.seconds(60), .seconds(300)])
        #expect(!c.gateway.id.isEmpty)
    }

    @Test("every key of the shared example")
    func fullExample() throws {
        let c = try GatewayConfiguration.parse(toml: """
            [gateway]
            id = "gym-north-1"
            state_directory = "/srv/blegate"
            [bluetooth]
            adapters = ["hci0", "hci1"]
            connect = "list"
            allow = ["a0:9e:1a:12:34:56", "Polar H10*"]
            deny = []
            max_per_adapter = 5
            notify = "start"
            adapter_reset = true
            scan_burst = "10s"
            scan_every = "1m"
            [hrv]
            windows = [60, "5m", 120.5]
            [cache]
            file = "c.sqlite"
            retention = "30d"
            max_size = "2GiB"
            delete_unsynced = true
            encryption_key_file = "/etc/blegate/cache.key"
            [backend]
            url = "https://backend.example/"
            token_file = ""
            sink = "samples"
            samples_path = "/api/v2/samples"
            batch_size = 1000
            interval = "250ms"
            unpaired = "hold"
            [status]
            socket = "/tmp/s.sock"
            """)
        #expect(c.gateway.id == "gym-north-1")
        #expect(c.cacheFilePath == "/srv/blegate/c.sqlite")
        #expect(c.bluetooth.adapters == ["hci0", "hci1"])
        #expect(c.bluetooth.connect == .list)
        #expect(c.bluetooth.allow == [.address("A0:9E:1A:12:34:56"), .name("Polar H10*")])
        #expect(c.bluetooth.maxLinks == 5)
        #expect(c.bluetooth.notify == .start)
        #expect(c.bluetooth.adapterReset)
        #expect(c.bluetooth.scanBurst == .seconds(10) && c.bluetooth.scanEvery == .seconds(60))
        #expect(c.hrv.windows == [.seconds(60), .seconds(300), .milliseconds(120_500)])
        #expect(c.cache.retention == .seconds(30 * 86_400))
        #expect(c.cache.maxSize == 2 * 1_073_741_824)
        #expect(c.cache.deleteUnsynced)
        #expect(c.cache.encryptionKeyFile == "/etc/blegate/cache.key")
        #expect(c.backend.url == "https://backend.example/")
        #expect(c.backend.tokenFile == nil)
        #expect(c.backend.sink == .samples)
        #expect(c.backend.samplesPath == "/api/v2/samples")
        #expect(c.backend.batchSize == 1000)
        #expect(c.backend.interval == .milliseconds(250))
        #expect(c.backend.unpaired == .hold)
        #expect(c.status.socket == "/tmp/s.sock")
    }

    @Test("the documented example file parses")
    func exampleFileParses() throws {
        try #require(FileManager.default.fileExists(atPath: exampleFile), "scripts/blegate.example.toml is in the checkout")
        let c = try GatewayConfiguration.load(path: exampleFile)
        #expect(c.backend.batchSize == 500)
    }

    @Test("durations", arguments: [
        ("250ms", Duration.milliseconds(250)), ("5s", .seconds(5)), ("10m", .seconds(600)), ("2h", .seconds(7200)),
        ("7d", .seconds(604_800)), ("1.5s", .milliseconds(1500)), (" 3 s ", .seconds(3)), ("1w", .seconds(604_800)),
    ])
    func durations(text: String, expected: Duration) {
        #expect(ConfigDuration.parse(text) == expected)
    }

    @Test("sizes", arguments: [
        ("512MiB", Int64(536_870_912)), ("2GiB", 2_147_483_648), ("1.5KiB", 1536), ("100MB", 100_000_000),
        ("4096", 4096), ("10B", 10), ("1 TiB", 1_099_511_627_776),
    ])
    func sizes(text: String, expected: Int64) {
        #expect(ByteSize.parse(text) == expected)
    }

    @Test("formatting durations and sizes for messages")
    func formatting() {
        #expect(ConfigDuration.format(.seconds(604_800)) == "7d")
        #expect(ConfigDuration.format(.seconds(86_400 * 3)) == "3d")
        #expect(ConfigDuration.format(.milliseconds(1500)) == "1500ms")
        #expect(ByteSize.format(536_870_912) == "512MiB")
        #expect(ByteSize.format(1536) == "1.5KiB")
    }

    @Test("allow/deny patterns: addresses case-insensitive, names with * wildcards")
    func patterns() {
        #expect(DevicePattern("a0:9e:1a:12:34:56").matches(address: "A0:9E:1A:12:34:56", name: nil))
        #expect(DevicePattern("Polar H10*").matches(address: "x", name: "Polar H10 7A1B2C3D"))
        #expect(!DevicePattern("Polar H10*").matches(address: "x", name: "Polar OH1 1234"))
        #expect(DevicePattern("*H10*").matches(address: "x", name: "Polar H10 1"))
        #expect(DevicePattern("Garmin").matches(address: "x", name: "Garmin"))
        #expect(!DevicePattern("Garmin").matches(address: "x", name: "Garmin HRM"))
    }
}

let exampleFile: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.appendingPathComponent("scripts/blegate.example.toml").path
}()

@Suite("Link limits and priority in the configuration")
struct LinkConfigParsingTests {
    @Test("max_links as one number or per adapter name and address; priority patterns")
    func maxLinks() throws {
        let one = try GatewayConfiguration.parse(toml: "[bluetooth]\nmax_links = 9\n")
        #expect(one.bluetooth.maxLinks == 9)
        #expect(one.bluetooth.maxLinksByAdapter.isEmpty)
        let table = try GatewayConfiguration.parse(toml: """
            [bluetooth]
            max_links = { hci0 = 5, "00:1a:7d:da:71:13" = 10, default = 7 }
            priority = ["A0:9E:1A:12:34:56", "Polar H10*"]
            """)
        #expect(table.bluetooth.maxLinks == 7)
        #expect(table.bluetooth.maxLinksByAdapter == ["hci0": 5, "00:1A:7D:DA:71:13": 10])
        #expect(table.bluetooth.priority.map(\.description) == ["A0:9E:1A:12:34:56", "Polar H10*"])
        #expect(GatewayConfiguration().bluetooth.maxLinks == 32, "no fixed slot count: a bound the learned limit stays under")
    }

    @Test("a bad adapter key names the key and the forms it takes")
    func badKey() {
        #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[bluetooth]\nmax_links = { usb0 = 5 }\n") }
        do {
            _ = try GatewayConfiguration.parse(toml: "[bluetooth]\nmax_links = { usb0 = 5 }\n")
        } catch {
            #expect(error.description.contains("bluetooth.max_links"))
            #expect(error.description.contains("adapter names (hci0)"))
        }
    }
}
