// SPDX-License-Identifier: Apache-2.0

import SleepTapCommandLine
import Testing

@Suite("The argument reader every executable parses with")
struct ArgumentReaderTests {
    /// Reads every option of `arguments`, taking a value for each flag in `valued`.
    static func read(_ arguments: [String], valued: Set<String>) throws(UsageError) -> [String] {
        var reader = ArgumentReader(arguments)
        var seen: [String] = []
        while let flag = try reader.nextFlag() {
            seen.append(valued.contains(flag) ? "\(flag) \(try reader.value(flag))" : flag)
        }
        return seen
    }

    @Test("A value follows its flag as the next argument or after =; a switch stands alone")
    func valueForms() throws {
        let read = try Self.read(
            ["--a", "1", "--b=2", "--c", "--d=x=y", "--e="], valued: ["--a", "--b", "--d", "--e"])
        #expect(read == ["--a 1", "--b 2", "--c", "--d x=y", "--e "])
    }

    @Test(
        "A switch given a value is refused, naming the switch and the value, wherever it stands",
        arguments: [
            (["--c=no"], "--c takes no value (found \"no\")"),
            (["--c=", "--a", "1"], "--c takes no value (found \"\")"),
            (["--a", "1", "--c=false", "--b"], "--c takes no value (found \"false\")"),
        ])
    func switchWithValue(_ arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try Self.read(arguments, valued: ["--a"]) }
    }

    @Test(
        "An option given twice is refused, naming it, in either form",
        arguments: [(["--a", "1", "--a=2"], "--a"), (["--c", "--b", "--c"], "--c"), (["x", "x"], "x")])
    func givenTwice(_ arguments: [String], flag: String) {
        #expect(throws: UsageError("\(flag) is given twice; give each option once")) {
            try Self.read(arguments, valued: ["--a"])
        }
    }

    @Test(
        "A missing value is named: at the end, or an option where the value should be",
        arguments: [
            (["--a"], "--a needs a value"),
            (["--a", "--c"], "--a needs a value (found the option --c instead)"),
        ])
    func missingValue(_ arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try Self.read(arguments, valued: ["--a"]) }
    }

    @Test(
        "Numbers out of range or in other notations are refused, naming the flag and the text",
        arguments: [
            ("integer", "0", "--n \"0\": expected a whole number from 1 to 9"),
            ("integer", "0x5", "--n \"0x5\": expected a whole number from 1 to 9"),
            ("seconds", "inf", "--n \"inf\": expected seconds from 0.5 to 2.0"),
            ("seconds", "0x1", "--n \"0x1\": expected seconds from 0.5 to 2.0"),
            ("unsigned", "-1", "--n \"-1\": expected a whole number from 0 to 18446744073709551615"),
            (
                "unsigned", "18446744073709551616",
                "--n \"18446744073709551616\": expected a whole number from 0 to 18446744073709551615"
            ),
        ])
    func badNumbers(kind: String, text: String, message: String) {
        #expect(throws: UsageError(message)) {
            var reader = ArgumentReader(["--n", text])
            let flag = try #require(try reader.nextFlag())
            switch kind {
            case "integer": _ = try reader.integer(flag, in: 1...9)
            case "seconds": _ = try reader.seconds(flag, in: 0.5...2)
            default: _ = try reader.unsignedInteger(flag)
            }
        }
    }

    @Test("Numbers in range are read")
    func goodNumbers() throws {
        var reader = ArgumentReader(["--i", "9", "--s=0.5", "--u", "18446744073709551615"])
        _ = try reader.nextFlag()
        #expect(try reader.integer("--i", in: 1...9) == 9)
        _ = try reader.nextFlag()
        #expect(try reader.seconds("--s", in: 0.5...2) == 0.5)
        _ = try reader.nextFlag()
        #expect(try reader.unsignedInteger("--u") == UInt64.max)
        #expect(try reader.nextFlag() == nil)
    }

    @Test("Text from the command line is clipped to 120 characters in messages")
    func clipped() {
        let long = String(repeating: "x", count: 500)
        #expect(throws: UsageError("unknown option \(String(repeating: "x", count: 117))...")) {
            throw ArgumentReader.unknown(long)
        }
    }

    @Test(
        "-h, --help or --version anywhere wins, the first of them decides",
        arguments: [
            (["--bad", "-h"], Parsed<Int>.help), (["--n", "--help", "--version"], .help),
            (["x", "--version", "-h"], .version), (["--n", "1"], nil),
        ])
    func informationRequest(_ arguments: [String], expected: Parsed<Int>?) {
        #expect(Parsed<Int>.informationRequest(in: arguments) == expected)
    }
}
