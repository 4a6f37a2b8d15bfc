// SPDX-License-Identifier: Apache-2.0

package import Foundation

/// A command line that cannot be used; printed to stderr with a pointer to `--help`, exit 64.
package struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Either "print help", "print the version" or "run with these options".
package enum Parsed<Options: Sendable>: Sendable {
    case help
    /// `--version`: print the tool's name and `SleepTapVersion.string`, and exit 0.
    case version
    case run(Options)

    /// `-h`/`--help` or `--version` anywhere on the command line wins over every other argument,
    /// a bad one included, as in swift-argument-parser; the first of them decides.
    /// - Returns: `.help` or `.version`, or nil when neither is present.
    package static func informationRequest(in arguments: some Sequence<String>) -> Parsed? {
        for argument in arguments {
            switch argument {
            case "-h", "--help": return .help
            case "--version": return .version
            default: continue
            }
        }
        return nil
    }
}

extension Parsed: Equatable where Options: Equatable {}

/// Walks the options of a command line: `--flag value` pairs (also `--flag=value`) and switches
/// (`--flag`), for every SleepTap executable. Each option may be given once.
///
/// A parser asks `nextFlag()` for each option, then the value it needs in the form it needs
/// (`value`, `nonEmpty`, `integer`, `seconds`, `unsignedInteger`). Every error is a `UsageError`
/// that names the option, the text given (at most 120 characters) and what was expected.
package struct ArgumentReader {
    private var items: [String]
    private var index = 0
    /// The value written after `=` in the last option, until a parser takes it.
    private var pendingValue: String?
    /// The last option returned.
    private var currentFlag = ""
    /// The options read so far.
    private var seen: Set<String> = []
    /// The names the command declares (`CommandSpec`); nil when the parser checks names itself.
    private var declared: Set<String>?

    package init(_ arguments: [String]) { items = arguments }

    /// A reader that accepts only the options `command` declares: any other argument that starts
    /// with `-` is an unknown option (operands are left to the parser).
    package init(_ arguments: [String], command: CommandSpec) {
        items = arguments
        declared = command.declaredNames
    }

    /// The next option, or nil at the end.
    /// - Throws: `UsageError` when the option is not one the command declares; when the previous
    ///   option was a switch given a value
    ///   (`--raw=no`): a switch takes none, and ignoring the value would turn `no` into yes; and
    ///   when the option was given before (`--endpoint A --endpoint B`): which one should win is
    ///   a guess, so neither does.
    package mutating func nextFlag() throws(UsageError) -> String? {
        if let unused = pendingValue {
            throw UsageError("\(Self.clip(currentFlag)) takes no value (found \"\(Self.clip(unused))\")")
        }
        guard index < items.count else { return nil }
        let item = items[index]
        index += 1
        currentFlag = item
        if item.hasPrefix("--"), let eq = item.firstIndex(of: "=") {
            pendingValue = String(item[item.index(after: eq)...])
            currentFlag = String(item[..<eq])
        }
        if let declared, currentFlag.hasPrefix("-"), currentFlag != "-", !declared.contains(currentFlag) {
            throw Self.unknown(currentFlag)
        }
        guard seen.insert(currentFlag).inserted else {
            throw UsageError("\(Self.clip(currentFlag)) is given twice; give each option once")
        }
        return currentFlag
    }

    /// The value of `flag`: the text after its `=`, else the next argument.
    /// - Throws: `UsageError` when there is none, or when the next argument is an option
    ///   (`--state-dir --help` is a forgotten value, not a directory named "--help").
    package mutating func value(_ flag: String) throws(UsageError) -> String {
        if let pending = pendingValue {
            pendingValue = nil
            return pending
        }
        guard index < items.count else { throw UsageError("\(flag) needs a value") }
        let value = items[index]
        if value.hasPrefix("--") && value.count > 2 {
            throw UsageError("\(flag) needs a value (found the option \(Self.clip(value)) instead)")
        }
        index += 1
        return value
    }

    /// The value of `flag` as a switch: `on` is true, `off` false.
    /// - Throws: `UsageError` naming the flag and the value when it is neither.
    package mutating func onOff(_ flag: String) throws(UsageError) -> Bool {
        let text = try value(flag)
        guard text == "on" || text == "off" else {
            throw UsageError("\(flag) \"\(Self.clip(text))\": expected on or off")
        }
        return text == "on"
    }

    /// The value of `flag`, which must not be empty.
    /// - Throws: `UsageError` naming the flag.
    package mutating func nonEmpty(_ flag: String) throws(UsageError) -> String {
        let text = try value(flag)
        guard !text.isEmpty else { throw UsageError("\(flag) must not be empty") }
        return text
    }

    /// The value of `flag` as a whole number within `range`.
    /// - Throws: `UsageError` naming the flag, the text and the range.
    package mutating func integer(_ flag: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        let text = try value(flag)
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": expected a whole number from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return number
    }

    /// The value of `flag` as an unsigned 64-bit whole number (a seed).
    /// - Throws: `UsageError` naming the flag, the text and the range.
    package mutating func unsignedInteger(_ flag: String) throws(UsageError) -> UInt64 {
        let text = try value(flag)
        guard let number = UInt64(text) else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": expected a whole number from 0 to \(UInt64.max)")
        }
        return number
    }

    /// The value of `flag` as seconds, a plain decimal (`decimal(_:)`) within `range`.
    /// - Throws: `UsageError` naming the flag, the text and the range.
    package mutating func seconds(_ flag: String, in range: ClosedRange<Double>) throws(UsageError) -> TimeInterval {
        let text = try value(flag)
        guard let number = Self.decimal(text), range.contains(number) else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": expected seconds from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// The value of `flag` as seconds written plainly (`plainDecimal(_:)`: digits with at most
    /// one dot, no sign or exponent) within `range`.
    /// - Throws: `UsageError` naming the flag, the text and the range.
    package mutating func plainSeconds(_ flag: String, in range: ClosedRange<Double>) throws(UsageError)
        -> TimeInterval
    {
        let text = try value(flag)
        guard let number = Self.plainDecimal(text), range.contains(number) else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": expected seconds from \(range.lowerBound) to \(range.upperBound), "
                    + "written as digits with at most one dot (e.g. 90 or 1.5)")
        }
        return number
    }

    /// A non-negative number written as digits with at most one dot (`90`, `1.5`, `.5`): no sign,
    /// exponent, hex, inf or nan.
    package static func plainDecimal(_ text: String) -> Double? {
        let digits = text.filter { $0 != "." }
        guard !digits.isEmpty, text.count - digits.count <= 1, digits.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Double(text)
    }

    /// The error for an option the parser does not know, naming it.
    package static func unknown(_ flag: String) -> UsageError {
        UsageError("unknown option \(clip(flag))")
    }

    /// At most 120 characters of user input, for messages.
    package static func clip(_ text: String) -> String {
        text.count <= 120 ? text : String(text.prefix(117)) + "..."
    }

    /// A plain decimal number (digits, one dot, optional exponent): no hex, inf or nan.
    package static func decimal(_ text: String) -> Double? {
        let allowed = Set("0123456789.eE+-")
        guard !text.isEmpty, text.allSatisfy({ allowed.contains($0) }) else { return nil }
        return Double(text)
    }
}
