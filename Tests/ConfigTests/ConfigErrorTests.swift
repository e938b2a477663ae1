// SPDX-License-Identifier: MIT
import Config
import Foundation
import Testing

/// Parses `toml` and returns the error it must raise.
func configError(_ toml: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigError? {
    do {
        _ = try GatewayConfiguration.parse(toml: toml)
        Issue.record("expected a config error for:\n\(toml)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

@Suite("Configuration errors")
struct ConfigErrorTests {
    @Test("wrong type: the message of the shared spec, word for word")
    func wrongType() throws {
        let e = try #require(configError("[backend]\nbatch_size = \"many\""))
        #expect(e.code == .wrongType)
        #expect(e.key == "backend.batch_size")
        #expect(e.description == #"config error: backend.batch_size: must be an integer from 1 to 10000, got "many". Example: batch_size = 500"#)
    }

    @Test("wrong types across kinds", arguments: [
        ("[bluetooth]\nadapter_reset = \"yes\"", "bluetooth.adapter_reset", "must be true or false"),
        ("[bluetooth]\nadapters = \"hci0\"", "bluetooth.adapters", "must be an array"),
        ("[bluetooth]\nallow = [1, 2]", "bluetooth.allow", "must be an array of non-empty strings"),
        ("[gateway]\nid = 7", "gateway.id", "must be a string, got 7"),
        ("[cache]\nmax_size = true", "cache.max_size", "must be a size"),
        ("[backend]\ninterval = [5]", "backend.interval", "must be a duration"),
        ("gateway = 3", "gateway", "must be a section [gateway], got 3"),
    ])
    func wrongTypes(toml: String, key: String, fragment: String) throws {
        let e = try #require(configError(toml))
        #expect(e.code == .wrongType)
        #expect(e.key == key)
        #expect(e.description.contains(fragment), "\(e)")
        #expect(e.example != nil)
    }

    @Test("out of range", arguments: [
        ("[backend]\nbatch_size = 0", "backend.batch_size", "got 0"),
        ("[backend]\nbatch_size = 10001", "backend.batch_size", "got 10001"),
        ("[bluetooth]\nmax_per_adapter = 99", "bluetooth.max_per_adapter", "from 1 to 64"),
        ("[bluetooth]\nmax_links = 0", "bluetooth.max_links", "from 1 to 64"),
        ("[bluetooth]\nmax_links = { hci0 = 100 }", "bluetooth.max_links", "hci0 must be an integer from 1 to 64"),
        ("[cache]\nretention = \"10s\"", "cache.retention", "must be from 1m to"),
        ("[backend]\ninterval = \"10ms\"", "backend.interval", "must be from 100ms to 1h"),
        ("[hrv]\nwindows = [5]", "hrv.windows", "must be from 10s to 1h"),
        ("[cache]\nmax_size = \"10KiB\"", "cache.max_size", "at least 1MiB"),
        ("[bluetooth]\nscan_burst = \"0s\"", "bluetooth.scan_burst", "must be from 1s to 10m"),
        ("[bluetooth]\nscan_every = \"3s\"", "bluetooth.scan_every", "must be longer than scan_burst (3s), or 0 to scan all the time, got 3s"),
        ("[bluetooth]\nscan_burst = \"40s\"", "bluetooth.scan_every", "must be longer than scan_burst (40s)"),
    ])
    func outOfRange(toml: String, key: String, fragment: String) throws {
        let e = try #require(configError(toml))
        #expect(e.code == .outOfRange)
        #expect(e.key == key)
        #expect(e.description.contains(fragment), "\(e)")
    }

    @Test("unknown key: the nearest known key is suggested with an example")
    func unknownKeySuggestion() throws {
        let e = try #require(configError("[backend]\nbatch_sise = 100"))
        #expect(e.code == .unknownKey)
        #expect(e.key == "backend.batch_sise")
        #expect(e.problem.contains("did you mean backend.batch_size?"))
        #expect(e.example == "batch_size = 500")
    }

    @Test("a key put in the wrong section is pointed to its section")
    func keyInWrongSection() throws {
        let e = try #require(configError("[gateway]\nretention = \"7d\""))
        #expect(e.code == .unknownKey)
        #expect(e.key == "gateway.retention")
        #expect(e.problem.contains("did you mean cache.retention?"), "\(e)")
        #expect(e.example == #"[cache] retention = "7d""#)
    }

    @Test("unknown section: nearest section suggested; nothing close: the list")
    func unknownSection() throws {
        let e = try #require(configError("[cach]\nfile = \"x\""))
        #expect(e.code == .unknownKey)
        #expect(e.problem.contains("did you mean [cache]?"), "\(e)")
        let f = try #require(configError("[zzzzzzzz]\nx = 1"))
        #expect(f.problem.contains("known sections: [gateway], [bluetooth]"), "\(f)")
        #expect(!f.problem.contains("did you mean"))
    }

    @Test("bad durations", arguments: ["\"7 days\"", "\"abc\"", "\"-5s\"", "\"5\"", "\"1e3s\"", "-1"])
    func badDuration(value: String) throws {
        let e = try #require(configError("[cache]\nretention = \(value)"))
        #expect(e.code == .badDuration)
        #expect(e.key == "cache.retention")
        #expect(e.description.contains("must be a duration"))
        #expect(e.example == #"retention = "7d""#)
    }

    @Test("bad sizes", arguments: ["\"lots\"", "\"12 parsecs\"", "\"-1MiB\"", "-5", "\"1.5\""])
    func badSize(value: String) throws {
        let e = try #require(configError("[cache]\nmax_size = \(value)"))
        #expect(e.code == .badSize)
        #expect(e.key == "cache.max_size")
        #expect(e.example == #"max_size = "512MiB""#)
    }

    @Test("bad enumeration values name every allowed value", arguments: [
        ("[backend]\nsink = \"kafka\"", "backend.sink", #"must be "wearmetrics" or "samples", got "kafka""#),
        ("[backend]\nunpaired = \"drop\"", "backend.unpaired", #"must be "send" or "hold""#),
        ("[bluetooth]\nnotify = \"poll\"", "bluetooth.notify", #"must be "acquire" or "start""#),
        ("[bluetooth]\nconnect = \"all\"", "bluetooth.connect", #"must be "auto" or "list""#),
    ])
    func badEnum(toml: String, key: String, fragment: String) throws {
        let e = try #require(configError(toml))
        #expect(e.code == .badValue)
        #expect(e.key == key)
        #expect(e.description.contains(fragment), "\(e)")
    }

    @Test("bad forms of strings", arguments: [
        ("[backend]\nurl = \"ftp://x\"", "backend.url"),
        ("[backend]\nurl = \"https://\"", "backend.url"),
        ("[backend]\nsamples_path = \"api/v1\"", "backend.samples_path"),
        ("[bluetooth]\nadapters = [\"usb0\"]", "bluetooth.adapters"),
        ("[gateway]\nstate_directory = \"var/lib\"", "gateway.state_directory"),
        ("[gateway]\nid = \"\"", "gateway.id"),
        ("[cache]\nencryption_key_file = \"key\"", "cache.encryption_key_file"),
        ("[hrv]\nwindows = [60, \"1m\"]", "hrv.windows"),
        ("[bluetooth]\nconnect = \"list\"", "bluetooth.allow"),
    ])
    func badForms(toml: String, key: String) throws {
        let e = try #require(configError(toml))
        #expect(e.code == .badValue)
        #expect(e.key == key)
    }

    @Test("a TOML syntax error names line and column")
    func syntax() throws {
        let e = try #require(configError("[backend]\nbatch_size = = 5"))
        #expect(e.code == .syntax)
        #expect(e.key.hasPrefix("line 2"), "\(e)")
    }

    @Test("missing configuration file")
    func missingFile() throws {
        do {
            _ = try GatewayConfiguration.load(path: "/nonexistent/blegate.toml")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .missingFile)
            #expect(error.description.hasPrefix("config error: /nonexistent/blegate.toml: file does not exist"))
        }
    }
}
