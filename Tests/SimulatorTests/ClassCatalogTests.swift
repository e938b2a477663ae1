import Simulator
import Testing

/// The size and mix of a class, as `--straps N --advertising A --advertising-only M` asks.
struct ClassShape: Sendable, CustomTestStringConvertible {
    var straps: Int
    var advertising: Int
    var only: Int
    var testDescription: String { "\(straps) straps, \(advertising) advertising, \(only) broadcast-only" }
}

@Suite("Choosing the class")
struct ClassCatalogTests {
    @Test("Without --advertising the room is the classic one, device for device")
    func classicRoomUnchanged() {
        // What seed 42 with 6 straps and 2 watches has always given.
        let expected = [
            "A0:9E:1A:93:9D:95 public polar-h10 \"Polar H10 E16FD729\"",
            "EC:50:03:11:A0:E2 random garmin-hrm-pro \"HRM-Pro:983323\"",
            "C0:D3:30:48:D5:CB random wahoo-tickr \"TICKR 0B30\"",
            "FC:44:92:D9:B1:22 random coospo-h6 \"COOSPO H6 649C\"",
            "A0:9E:1A:A6:06:58 public polar-h10 \"Polar H10 BCE4114F\"",
            "E4:DC:AF:34:CB:DD random garmin-hrm-pro \"HRM-Pro:608801\"",
            "E5:1C:2D:C1:B2:F4 random garmin-forerunner-255 \"Forerunner 255\"",
            "E3:30:04:11:55:D3 random garmin-forerunner-255 \"Forerunner 255\"",
        ]
        let devices = DeviceCatalog.devices(seed: 42, straps: 6, watches: 2)
        #expect(devices.map { "\($0.address) \($0.addressType) \($0.model.rawValue) \"\($0.name)\"" } == expected)
        for d in devices where d.model == .polarH10 {
            let block = d.manufacturerData[0x006B] ?? []
            // Contact, counter 1, a resting rate as both averages.
            #expect(block.count == 4 && block[0] == 0x06 && block[2] == block[3] && (55..<85).contains(Int(block[3])), "\(block)")
        }
        #expect(DeviceCatalog.devices(seed: 42, straps: 6, watches: 2, advertising: nil) == devices)
    }

    @Test("--advertising N puts heart rate in exactly N straps' advertisements, M of them broadcast-only",
          arguments: [ClassShape(straps: 40, advertising: 10, only: 4), ClassShape(straps: 50, advertising: 50, only: 10),
                      ClassShape(straps: 80, advertising: 12, only: 0), ClassShape(straps: 40, advertising: 0, only: 0),
                      ClassShape(straps: 7, advertising: 3, only: 3)])
    func advertisingClass(_ shape: ClassShape) {
        let devices = DeviceCatalog.devices(seed: 9, straps: shape.straps, watches: 1,
                                            advertising: shape.advertising, advertisingOnly: shape.only)
        #expect(devices.count == shape.straps + 1)
        #expect(devices.last?.model == .garminForerunner255)
        #expect(Set(devices.map(\.address)).count == devices.count)
        let straps = devices.dropLast()
        let heard = straps.filter { $0.model.advertisesHeartRate }
        #expect(heard.count == shape.advertising)
        #expect(heard.filter { $0.model == .polarBroadcast }.count == shape.only)
        for d in heard {
            #expect(d.address.hasPrefix("A0:9E:1A:") && d.addressType == "public")
            #expect(d.manufacturerData[0x006B]?.count == 4)
        }
        for d in heard where d.model == .polarBroadcast {
            #expect(d.name.hasPrefix("Polar H9 ") && d.name.count == "Polar H9 ".count + 8, "\(d.name)")
            #expect(!d.model.advertisedServices.contains(0x180D))
            #expect(!d.model.connectable)
        }
        let silent = straps.filter { !$0.model.advertisesHeartRate }.map(\.model)
        #expect(silent == (0..<silent.count).map { DeviceModel.silentStraps[$0 % DeviceModel.silentStraps.count] })
        // Spread through the room, not bunched at one end.
        if shape.advertising > 1, shape.advertising < shape.straps {
            let positions = straps.indices.filter { straps[$0].model.advertisesHeartRate }
            #expect(positions.last! - positions.first! >= shape.straps / 2, "\(positions)")
        }
        let again = DeviceCatalog.devices(seed: 9, straps: shape.straps, watches: 1,
                                          advertising: shape.advertising, advertisingOnly: shape.only)
        #expect(again == devices)
    }

    @Test("--unplug, --link-limits, --advertising: values parse; contradictions are refused with the reason")
    func flagsParse() throws {
        #expect(try AdapterUnplug(parsing: "1@60+60") == AdapterUnplug(adapter: 1, at: 60, for: 60))
        #expect(try AdapterUnplug(parsing: "0@2.5") == AdapterUnplug(adapter: 0, at: 2.5, for: 0))
        for bad in ["", "1", "@60+60", "1@", "1@60+", "1@60+0", "-1@5+5", "1@x+5", "1@5+5+5", "1@-5+5"] {
            #expect(throws: SimulatorError.self, "\(bad)") { try AdapterUnplug(parsing: bad) }
        }
        #expect(try SimulatorConfiguration.parseLinkLimits("4,7") == [4, 7])
        #expect(try SimulatorConfiguration.parseLinkLimits("0, 3") == [0, 3])
        for bad in ["", "4,", "a", "4,-1"] {
            #expect(throws: SimulatorError.self, "\(bad)") { try SimulatorConfiguration.parseLinkLimits(bad) }
        }

        var config = SimulatorConfiguration()
        config.straps = 40
        config.advertising = 10
        config.advertisingOnly = 4
        config.adapters = 2
        config.unplugs = [AdapterUnplug(adapter: 1, at: 60, for: 60)]
        config.linkLimits = [4, 7]
        try config.validate()
        func refused(_ change: (inout SimulatorConfiguration) -> Void, _ words: String) {
            var c = config
            change(&c)
            do {
                try c.validate()
                Issue.record("accepted: \(words)")
            } catch {
                #expect(error.description.contains(words), "\(error)")
            }
        }
        refused({ $0.advertising = 41 }, "--advertising 41 must be within 0...40")
        refused({ $0.advertisingOnly = 11 }, "--advertising-only 11 must be within 0...10")
        refused({ $0.advertising = nil }, "--advertising-only needs --advertising")
        refused({ $0.unplugs = [AdapterUnplug(adapter: 2, at: 1, for: 1)] }, "there is no adapter 2")
        refused({ $0.linkLimits = [-1] }, "--link-limits must not be negative")
    }
}
