// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation

/// A self-signed certificate and its key, made by the `openssl` command for one test, in a
/// directory of their own that `remove()` deletes.
struct TestCertificate {
    let directory: String
    var certificate: String { directory + "/cert.pem" }
    var key: String { directory + "/key.pem" }

    /// - Parameter subjectAltName: e.g. `DNS:localhost`.
    init(subjectAltName: String) async throws {
        directory = NSTemporaryDirectory() + "blegate-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (out, status) = await shell(
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=blegate-test "
                + "-addext 'subjectAltName=\(subjectAltName)' -keyout '\(directory)/key.pem' -out '\(directory)/cert.pem' 2>&1")
        guard status == 0 else { throw TestSupportError("openssl could not make a certificate (status \(status)): \(out)") }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
