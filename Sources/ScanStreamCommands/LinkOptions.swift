// SPDX-License-Identifier: MIT

/// The command-line options of `scan` and `stream`, declared once and parsed here.
///
/// Why not swift-argument-parser, which every other command uses: on Linux it imports
/// FoundationEssentials, and its parsing runs enough of that, of its own reflection and
/// of the regex and collection-difference code behind its messages to keep about
/// 0.8 MiB resident in `blegate-stream`, whose whole budget with 50 straps is 12 MiB
/// (docs/benchmarks.md). Two commands with a dozen `--name value` options need
/// very little of it. `blegate` still lists them, through thin argument-parser wrappers
/// that pass their arguments here, so each option is defined in one place.
public struct LinkOption: Sendable {
    /// Long name without the dashes.
    public let name: String
    /// The placeholder for its value (`S`, `ADDR|NAME`); nil for a flag.
    public let value: String?
    public let help: String
    /// May be given more than once (`--device`); the others keep their last value.
    public let repeatable: Bool

    public static func flag(_ name: String, help: String) -> LinkOption {
        LinkOption(name: name, value: nil, help: help, repeatable: false)
    }

    public static func value(_ name: String, _ placeholder: String, help: String, repeatable: Bool = false) -> LinkOption {
        LinkOption(name: name, value: placeholder, help: help, repeatable: repeatable)
    }
}

/// A command line that does not fit the options: what was wrong, for the user.
public struct LinkUsageError: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// The options given, checked against their declarations.
public struct LinkArguments: Sendable {
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    /// `-h` or `--help` was among them.
    public private(set) var helpRequested = false

    /// Accepts `--name value`, `--name=value` and `--flag`; anything else is an error
    /// that names the argument.
    public init(_ arguments: [String], options: [LinkOption]) throws(LinkUsageError) {
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" {
                helpRequested = true
                continue
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw LinkUsageError("unexpected argument '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw LinkUsageError("unknown option '--\(name)'")
            }
            guard let placeholder = option.value else {
                if inline != nil { throw LinkUsageError("'--\(name)' takes no value") }
                flags.insert(name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else if index < arguments.endIndex, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            } else {
                throw LinkUsageError("missing value for '--\(name) <\(placeholder)>'")
            }
            if option.repeatable {
                values[name, default: []].append(value)
            } else {
                values[name] = [value]
            }
        }
    }

    public func flag(_ name: String) -> Bool { flags.contains(name) }

    public func strings(_ name: String) -> [String] { values[name] ?? [] }

    public func string(_ name: String) -> String? { values[name]?.last }

    public func double(_ name: String) throws(LinkUsageError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), value.isFinite else {
            throw LinkUsageError("'\(text)' is not a number, for '--\(name)'")
        }
        return value
    }

    public func int(_ name: String) throws(LinkUsageError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { throw LinkUsageError("'\(text)' is not a whole number, for '--\(name)'") }
        return value
    }
}

/// What `scan` and `stream` have in common for the entry point: a name, help text,
/// their options, and a way to be built from parsed arguments.
public protocol LinkCommand: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    static var discussion: String { get }
    static var options: [LinkOption] { get }
    init(_ arguments: LinkArguments) throws(LinkUsageError)
    /// Runs to the end; the exit status to leave with.
    func run() async -> Int32
}

extension LinkCommand {
    /// `blegate NAME [--a <A>] [--flag]`: the usage line of errors and help.
    public static var usage: String {
        let parts = options.map { option -> String in
            let text = option.value.map { "--\(option.name) <\($0)>" } ?? "--\(option.name)"
            return option.repeatable ? "[\(text) ...]" : "[\(text)]"
        }
        return (["blegate", name] + parts).joined(separator: " ")
    }

    /// The option list as `--help` prints it.
    public static var optionHelp: String {
        let rows = options.map { option in
            (option.value.map { "--\(option.name) <\($0)>" } ?? "--\(option.name)", option.help)
        } + [("-h, --help", "Show help information.")]
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { label, help in
            "  " + label + String(repeating: " ", count: width - label.count + 2) + help
        }.joined(separator: "\n")
    }

    public static var help: String {
        "OVERVIEW: \(abstract)\n\n\(discussion)\n\nUSAGE: \(usage)\n\nOPTIONS:\n\(optionHelp)\n"
    }
}
