// SPDX-License-Identifier: MIT
import Config
import Testing

@Suite("[display] and [members]")
struct DisplayConfigTests {
    @Test("defaults: the wall on 0.0.0.0:8080, no members")
    func defaults() throws {
        let c = try GatewayConfiguration.parse(toml: "")
        #expect(c.display.listen == GatewayConfiguration.ListenAddress(host: "0.0.0.0", port: 8080))
        #expect(c.display.gymName == nil)
        #expect(c.members.isEmpty)
    }

    @Test("listen: host:port, [v6]:port, port 0, and \"\" for off")
    func listen() throws {
        #expect(try GatewayConfiguration.parse(toml: "[display]\nlisten = \"127.0.0.1:9000\"").display.listen
            == GatewayConfiguration.ListenAddress(host: "127.0.0.1", port: 9000))
        #expect(try GatewayConfiguration.parse(toml: "[display]\nlisten = \"[::]:0\"").display.listen
            == GatewayConfiguration.ListenAddress(host: "::", port: 0))
        #expect(try GatewayConfiguration.parse(toml: "[display]\nlisten = \"\"").display.listen == nil)
        for bad in ["8080", "host:", ":8080", "host:70000", "a b:80"] {
            let error = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[display]\nlisten = \"\(bad)\"") }
            #expect(error?.key == "display.listen")
        }
    }

    @Test("members by address (upper-cased) or client id, every key validated")
    func members() throws {
        let c = try GatewayConfiguration.parse(toml: """
            [display]
            gym_name = "North Gym"
            [members."a0:9e:1a:12:34:56"]
            name = "Ana"
            age = 34
            weight_kg = 64.5
            sex = "female"
            resting_hr = 58
            machines = ["c4:7c:8d:6a:21:0f"]
            [members.client-77]
            max_hr = 191
            """)
        #expect(c.display.gymName == "North Gym")
        let ana = try #require(c.members["A0:9E:1A:12:34:56"])
        #expect(ana.name == "Ana" && ana.age == 34 && ana.weightKg == 64.5 && ana.sex == .female && ana.restingHR == 58)
        #expect(ana.machines == ["C4:7C:8D:6A:21:0F"])
        #expect(c.members["client-77"]?.maxHR == 191 && c.members["client-77"]?.machines == [])

        let unknown = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[members.x]\nweight = 70") }
        #expect(unknown?.key == "members.\"x\".weight")
        #expect(unknown?.problem.contains("weight_kg") == true, "\(unknown?.problem ?? "")")
        let sex = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[members.x]\nsex = \"m\"") }
        #expect(sex?.key == "members.\"x\".sex")
        let age = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[members.x]\nage = 300") }
        #expect(age?.key == "members.\"x\".age")
        let rest = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[members.x]\nmax_hr = 150\nresting_hr = 150") }
        #expect(rest?.key == "members.\"x\".resting_hr")
        let machine = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[members.x]\nmachines = [\"treadmill\"]") }
        #expect(machine?.key == "members.\"x\".machines" && machine?.problem.contains("\"treadmill\"") == true, "\(machine?.problem ?? "")")
        let notTable = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[members]\nana = 3") }
        #expect(notTable?.key == "members.ana")
    }
}
