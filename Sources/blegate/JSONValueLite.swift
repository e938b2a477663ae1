// SPDX-License-Identifier: MIT
import Foundation

/// Reading the small JSON objects of the status socket.
enum JSONValueLite {
    static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }
}
