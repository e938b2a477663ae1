// SPDX-License-Identifier: MIT
import Foundation
import Gateway

/// Learned link limits in `<state_directory>/link-limits.json`, by adapter address:
/// `{"B8:27:EB:12:34:56": 5}`. Written whole to a temporary file and renamed, so a
/// power cut leaves the old file or the new one. A file that cannot be read is ignored
/// (the limits are learned again); one that cannot be written is reported once.
final class LinkLimitFile: LinkLimitMemory, Sendable {
    let path: String
    private let onError: @Sendable (String) -> Void

    init(path: String, onError: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.onError = onError
    }

    func load() -> [String: Int] {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        var limits: [String: Int] = [:]
        for (address, value) in object {
            if let n = value as? Int, n > 0 { limits[address.uppercased()] = n }
        }
        return limits
    }

    func save(_ limits: [String: Int]) {
        do {
            let data = try JSONSerialization.data(withJSONObject: limits, options: [.sortedKeys])
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            onError("cannot save learned link limits to \(path): \(error.localizedDescription)")
        }
    }
}
