// SPDX-License-Identifier: MIT
@testable import BlegateRun
import Testing

/// The decision behind the start-up warning about a bearer token sent over plain HTTP.
@Suite("A bearer token over plain http://")
struct PlainTextTokenTests {
    static let token = "/etc/blegate/token"

    @Test("to another host: a warning naming the host; to loopback or over https: none; without a token: none")
    func decision() {
        for url in ["http://backend.example/", "http://192.168.1.20:8080/api", "HTTP://Backend.Example", "http://user:pw@10.0.0.5/",
                    "http://[fe80::1]:8080/", "http://127.0.0.1.example.com/", "http://127.0.0.1@backend.example/", "http://128.0.0.1/"] {
            let warning = GatewayRuntime.plainTextTokenWarning(url: url, tokenFile: Self.token)
            #expect(warning?.hasPrefix("backend.url is plain http:// to ") == true, "\(url): \(warning ?? "no warning")")
            #expect(warning?.hasSuffix("the bearer token travels unencrypted; use https://") == true, "\(url)")
        }
        #expect(GatewayRuntime.plainTextTokenWarning(url: "http://user:pw@10.0.0.5/", tokenFile: Self.token)?.contains("to 10.0.0.5:") == true,
                "names the host, never the credentials")
        #expect(GatewayRuntime.plainTextTokenWarning(url: "http://127.0.0.1.example.com/", tokenFile: Self.token)?.contains("127.0.0.1.example.com") == true)
        for url in ["http://127.0.0.1:8080/", "http://localhost/", "http://LOCALHOST:9000", "http://127.8.9.10/", "http://[::1]:8080/",
                    "http://user:pw@localhost/", "https://backend.example/", "HTTPS://192.168.1.20/"] {
            #expect(GatewayRuntime.plainTextTokenWarning(url: url, tokenFile: Self.token) == nil, "\(url)")
        }
        #expect(GatewayRuntime.plainTextTokenWarning(url: "http://backend.example/", tokenFile: nil) == nil, "no token, nothing to leak")
    }
}
