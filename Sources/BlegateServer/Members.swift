// SPDX-License-Identifier: MIT
import BackendContract

/// A member as gateways (`GET /api/v1/members`), the staff page and `member list` see them
/// (the contract's type). A client id known only from pairing codes or workouts is a member
/// named by its id with an unknown profile, so ids handed out before members had names keep
/// working.
public typealias Member = ContractMember

/// Why a member's value was refused: the field as the API names it and a reason a person
/// can act on. The API answers it as 400 `{"error": "field: reason"}`, the CLI and the
/// staff page print the same text.
public struct MemberProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var reason: String
    /// The change is fine alone but not with the profile it lands on (a resting rate at or
    /// above the stored maximum): 409, not 400.
    public var conflict = false

    public init(_ field: String, _ reason: String, conflict: Bool = false) {
        self.field = field
        self.reason = reason
        self.conflict = conflict
    }

    public var description: String { "\(field): \(reason)" }
}

/// One profile value of a change: left as it is, cleared (unknown), or set.
public enum FieldChange<Value: Sendable & Equatable>: Sendable, Equatable {
    case keep
    case clear
    case set(Value)

    func applied(to current: Value?) -> Value? {
        switch self {
        case .keep: current
        case .clear: nil
        case let .set(v): v
        }
    }
}

/// The changes to a member that a PUT, `member set` or the staff page's form asks for.
/// A name can be changed, never cleared.
public struct MemberChanges: Sendable, Equatable {
    public var name: String?
    public var age: FieldChange<Int> = .keep
    public var maxHR: FieldChange<Int> = .keep
    public var restingHR: FieldChange<Int> = .keep
    public var weightKg: FieldChange<Double> = .keep
    public var sex: FieldChange<String> = .keep

    public init() {}

    /// The profile fields with their ranges: wide enough for children and athletes,
    /// narrow enough to catch a typo (an age of 340, a max of 18).
    static let ranges: [String: ClosedRange<Double>] = [
        "age": 5...120, "max_hr": 100...240, "resting_hr": 25...120, "weight_kg": 20...350,
    ]
    static let fields = ["name", "age", "max_hr", "resting_hr", "weight_kg", "sex"]

    /// From a PUT body: any subset of the fields; null clears one (not the name).
    public init(json body: ContractValue) throws(MemberProblem) {
        guard case let .object(o) = body else { throw MemberProblem("body", "must be a JSON object") }
        for key in o.keys.sorted() where !Self.fields.contains(key) {
            throw MemberProblem(key, "not a member field (\(Self.fields.joined(separator: ", ")))")
        }
        if let v = o["name"] {
            guard case let .string(s) = v else { throw MemberProblem("name", "must be a string; a member's name cannot be cleared") }
            name = try Self.checkedName(s)
        }
        for key in ["age", "max_hr", "resting_hr"] {
            guard let v = o[key] else { continue }
            let change: FieldChange<Int>
            if case .null = v {
                change = .clear
            } else if let n = v.number {
                change = .set(try Self.checkedWhole(key, n))
            } else {
                throw MemberProblem(key, Self.wholeReason(key) + " or null")
            }
            switch key {
            case "age": age = change
            case "max_hr": maxHR = change
            default: restingHR = change
            }
        }
        if let v = o["weight_kg"] {
            if case .null = v {
                weightKg = .clear
            } else if let n = v.number {
                weightKg = .set(try Self.checkedWeight(n))
            } else {
                throw MemberProblem("weight_kg", "must be a number of kilograms from 20 to 350, or null")
            }
        }
        if let v = o["sex"] {
            if case .null = v {
                sex = .clear
            } else if let s = v.string, s == "female" || s == "male" {
                sex = .set(s)
            } else {
                throw MemberProblem("sex", "must be \"female\", \"male\" or null")
            }
        }
    }

    /// One field from text (a CLI option, a form field): empty or `none` clears it.
    public mutating func set(_ field: String, text raw: String) throws(MemberProblem) {
        let text = raw.trimmingSpaces
        let clear = text.isEmpty || text.lowercased() == "none"
        switch field {
        case "name":
            name = try Self.checkedName(text)
        case "age", "max_hr", "resting_hr":
            let change: FieldChange<Int>
            if clear {
                change = .clear
            } else {
                guard let n = Double(text), n.isFinite else { throw MemberProblem(field, Self.wholeReason(field)) }
                change = .set(try Self.checkedWhole(field, n))
            }
            switch field {
            case "age": age = change
            case "max_hr": maxHR = change
            default: restingHR = change
            }
        case "weight_kg":
            if clear {
                weightKg = .clear
            } else {
                guard let n = Double(text.replacing(",", with: ".")), n.isFinite else {
                    throw MemberProblem(field, "must be a number of kilograms from 20 to 350")
                }
                weightKg = .set(try Self.checkedWeight(n))
            }
        case "sex":
            if clear {
                sex = .clear
            } else {
                let s = text.lowercased()
                guard s == "female" || s == "male" else { throw MemberProblem(field, "must be female or male") }
                sex = .set(s)
            }
        default:
            throw MemberProblem(field, "not a member field (\(Self.fields.joined(separator: ", ")))")
        }
    }

    /// `member` with these changes, checked as a whole (the resting rate below the
    /// maximum, whichever of the two changed).
    public func applied(to member: Member) throws(MemberProblem) -> Member {
        var m = member
        if let name { m.name = name }
        m.age = age.applied(to: m.age)
        m.maxHR = maxHR.applied(to: m.maxHR)
        m.restingHR = restingHR.applied(to: m.restingHR)
        m.weightKg = weightKg.applied(to: m.weightKg)
        m.sex = sex.applied(to: m.sex)
        if let r = m.restingHR, let x = m.maxHR, r >= x {
            throw MemberProblem("resting_hr", "must be below max_hr (\(x)), got \(r)", conflict: true)
        }
        return m
    }

    static func wholeReason(_ field: String) -> String {
        let r = ranges[field]!
        return "must be a whole number from \(Int(r.lowerBound)) to \(Int(r.upperBound))"
    }

    static func checkedWhole(_ field: String, _ n: Double) throws(MemberProblem) -> Int {
        guard n == n.rounded(), ranges[field]!.contains(n) else {
            throw MemberProblem(field, Self.wholeReason(field) + ", got \(Self.shown(n))")
        }
        return Int(n)
    }

    static func checkedWeight(_ n: Double) throws(MemberProblem) -> Double {
        guard ranges["weight_kg"]!.contains(n) else {
            throw MemberProblem("weight_kg", "must be a number of kilograms from 20 to 350, got \(Self.shown(n))")
        }
        return (n * 10).rounded() / 10
    }

    static func shown(_ n: Double) -> String {
        n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
    }

    /// 1 to 80 characters after trimming spaces; no control characters (a NUL, a line
    /// break, an escape sequence would corrupt the CLI's tab-separated list and a terminal)
    /// and no bidirectional overrides (which make a name display as another).
    public static func checkedName(_ raw: String) throws(MemberProblem) -> String {
        let name = raw.trimmingSpaces
        guard !name.isEmpty, name.count <= 80 else { throw MemberProblem("name", "must be 1 to 80 characters, got \(name.count)") }
        for s in name.unicodeScalars {
            switch s.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator, .surrogate:
                throw MemberProblem("name", "must not contain control characters (U+\(String(s.value, radix: 16, uppercase: true).leftPadded(4)))")
            default: break
            }
            if (0x202A...0x202E).contains(s.value) || (0x2066...0x2069).contains(s.value) {
                throw MemberProblem("name", "must not contain bidirectional overrides (U+\(String(s.value, radix: 16, uppercase: true)))")
            }
        }
        return name
    }

    /// A client id given on the command line: printable ASCII without spaces, as it goes
    /// into gateways' configurations and URLs.
    public static func checkedClientID(_ id: String) throws(MemberProblem) -> String {
        guard !id.isEmpty, id.utf8.count <= 100, id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw MemberProblem("client_id", "must be 1 to 100 printable ASCII characters without spaces, got \"\(id)\"")
        }
        return id
    }
}

/// Bluetooth addresses as the server stores them: `AA:BB:CC:DD:EE:FF`, upper case.
enum StrapAddress {
    static func normalized(_ text: String) -> String? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.utf8.count == 2 && $0.utf8.allSatisfy(Self.isHexDigit) }) else { return nil }
        return text.uppercased()
    }

    static func isHexDigit(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x46).contains(b) || (0x61...0x66).contains(b)
    }
}
