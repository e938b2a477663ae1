// SPDX-License-Identifier: MIT
import JSON
import Outbox
import BackendContract

/// The contract's checks of records, workouts, profile metrics and samples are
/// `ContractValidation`'s, which blegate-server judges with too; they read the JSON target's
/// `JSONValue`, so the backend's parsed items go to them in that form.
extension JSON {
    var contractValue: JSONValue {
        switch self {
        case .null: .null
        case let .bool(b): .bool(b)
        case let .number(n): n == n.rounded() && abs(n) < 1e15 ? .int(Int(n)) : .double(n)
        case let .string(s): .string(s)
        case let .array(a): .array(a.map(\.contractValue))
        // Keys by name: a dictionary has no order, and the checks do not need one.
        case let .object(o): .object(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value.contractValue) })
        }
    }
}
