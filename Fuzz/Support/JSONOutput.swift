// SPDX-License-Identifier: MIT
// What `blegate decode` does with a decoded value, for the fuzz entries: encoding it must
// never fail (a non-finite number or an unencodable field would be a finding).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

func fuzzEncodeJSON(_ value: some Encodable) {
    do {
        _ = try JSONEncoder().encode(value)
    } catch {
        fatalError("a decoded value does not encode: \(error)")
    }
}
