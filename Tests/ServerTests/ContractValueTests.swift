// SPDX-License-Identifier: MIT
import BackendContract
import Testing

/// The value both backends judge untrusted items in: numbers as the contract counts them,
/// and decoding guesses that change only the speed, never the value.
@Suite("ContractValue")
struct ContractValueTests {
    @Test("a number without a fraction is an integer, 2700.0 too; others are doubles")
    func numbers() throws {
        let v = try ContractValue.parse(#"{"a":2700,"b":2700.0,"c":2700.5,"d":1e3,"e":-0,"f":12345678901234567890,"g":0.1}"#)
        #expect(v["a"]?.integer == 2700 && v["b"]?.integer == 2700 && v["d"]?.integer == 1000 && v["e"]?.integer == 0)
        #expect(v["c"]?.integer == nil && v["c"]?.number == 2700.5)
        #expect(v["f"]?.integer == nil && v["f"]?.number == 1.2345678901234567e19)
        #expect(v["g"]?.number == 0.1)
        #expect(ContractValue.int(2) == .double(2), "numbers compare by value")
        #expect(ContractValue.int(2) != .string("2"))
    }

    @Test("text: compact, keys sorted, slashes as they are")
    func text() throws {
        let v = try ContractValue.parse(#"{"z":[1,2.5,null,true],"a":{"y":"a/b","x":"\u0001\"é"}}"#)
        #expect(v.text == #"{"a":{"x":"\u0001\"é","y":"a/b"},"z":[1,2.5,null,true]}"#)
        #expect(try ContractValue.parse(v.text) == v)
    }

    @Test("what is not one JSON value is refused", arguments: ["", "{", "[1,2", "01", "{\"a\":1} x", "nul", "\"\\ud800\"", "1e400"])
    func refused(_ text: String) {
        #expect(throws: (any Error).self) { try ContractValue.parse(text) }
    }

    /// Each member in the wrong type for its guess, and arrays of mixed elements: a wrong
    /// guess must leave the value, and the elements after it, as they are.
    @Test("the contract's guesses give the same value as none, for good items and for every wrong type")
    func guesses() throws {
        let bodies = [
            #"{"gateway_id":"g","records":[{"id":"x","client_id":null,"timestamp":"t","device_id":"d","source":"s","metrics":{"hr":121,"rmssd":41.5},"meta":{"battery":"0.9","contact":true,"n":1},"rr_ms":[496.1,502]}]}"#,
            #"{"gateway_id":7,"records":[{"id":1,"client_id":7,"timestamp":[1],"device_id":{"a":1},"source":true,"metrics":[1,"a"],"meta":{"battery":[1],"x":{"y":null}},"rr_ms":["a",500,null,{"x":1},[2],7.5,true]},"nope",[1,2],null,3]}"#,
            #"{"gateway_id":"g","workouts":[{"duration_seconds":"2700","seconds_in_zone":[100,"x",600.5,null],"formulas":{"zones":1,"kcal":null},"coverage":[1],"class_name":null,"max_heart_rate":176.0}]}"#,
            #"{"metrics":{"hr":1},"samples":[{"value":"120","uuid":5,"deviceName":null}],"records":{"a":1},"device":["x"],"code":{"c":1}}"#,
            #"[{"records":[1]},"x",2.5]"#,
        ]
        for body in bodies {
            let plain = try ContractValue.parse(body)
            let guessed = try ContractValue.parse(body, guess: .gatewayRequest)
            #expect(guessed == plain, "\(body)")
            #expect(guessed.text == plain.text, "\(body)")
        }
        let record = try ContractValue.parse(bodies[1])["records"]?.array?.first
        #expect(record?["rr_ms"]?.array?.count == 7)
        #expect(record?["rr_ms"]?.text == #"["a",500,null,{"x":1},[2],7.5,true]"#)
    }
}
