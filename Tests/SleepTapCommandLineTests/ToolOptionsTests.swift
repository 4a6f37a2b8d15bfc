// SPDX-License-Identifier: Apache-2.0

import SleepTapCommandLine
import SleepTapCore
import Testing

@testable import sleeptap_demo
@testable import sleeptap_soak

@Suite("sleeptap-demo's and sleeptap-soak's command lines")
struct ToolOptionsTests {
    enum Request { case help, version }

    @Test("The demo reads every flag in both forms, and defaults to 43200 virtual seconds a second")
    func demoFlags() throws {
        #expect(try DemoOptions.parse([]) == .run(DemoOptions(speed: 43_200, raw: false, keep: false)))
        #expect(
            try DemoOptions.parse(["--speed", "600", "--raw", "--keep"])
                == .run(DemoOptions(speed: 600, raw: true, keep: true)))
        #expect(try DemoOptions.parse(["--speed=200000"]) == .run(DemoOptions(speed: 200_000)))
    }

    @Test(
        "The demo refuses a bad --speed, naming the value: out of range, hex, inf, nan, empty",
        arguments: ["599", "200000.5", "abc", "0x258", "inf", "nan", "", "-600"])
    func demoBadSpeed(_ text: String) {
        #expect(throws: UsageError("--speed \"\(text)\": not a number from 600 to 200000")) {
            try DemoOptions.parse(["--speed", text])
        }
    }

    @Test(
        "The demo names what is wrong with the command line",
        arguments: [
            (["--speed"], "--speed needs a value: a number from 600 to 200000"),
            (
                ["--speed", "--raw"],
                "--speed needs a value (found the option --raw instead): a number from 600 to 200000"
            ),
            (["--raw", "--speed", "600", "--raw"], "--raw is given twice; give each option once"),
            (["--raw=no"], "--raw takes no value (found \"no\")"),
            (["--keep", "stray"], "unknown option stray"),
            (["--fast"], "unknown option --fast"),
        ])
    func demoUsageErrors(_ arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try DemoOptions.parse(arguments) }
    }

    @Test(
        "The soak reads every flag in both forms; the seed is random unless given",
        arguments: [
            ([], SoakOptions()),
            (
                ["--steps", "1", "--seed", "0", "--verbose", "--json"],
                SoakOptions(steps: 1, seed: 0, verbose: true, json: true)
            ),
            (["--steps=100000", "--seed=18446744073709551615"], SoakOptions(steps: 100_000, seed: UInt64.max)),
        ])
    func soakFlags(_ arguments: [String], expected: SoakOptions) throws {
        #expect(try SoakOptions.parse(arguments) == .run(expected))
        #expect(SoakOptions().steps == 200 && SoakOptions().seed == nil)
    }

    @Test(
        "The soak refuses bad values, naming the value, and names what else is wrong",
        arguments: [
            (["--steps", "0"], "--steps \"0\": expected a whole number from 1 to 100000"),
            (["--steps", "100001"], "--steps \"100001\": expected a whole number from 1 to 100000"),
            (["--steps", "2.5"], "--steps \"2.5\": expected a whole number from 1 to 100000"),
            (["--seed", "-1"], "--seed \"-1\": expected a whole number from 0 to 18446744073709551615"),
            (["--seed", "0x10"], "--seed \"0x10\": expected a whole number from 0 to 18446744073709551615"),
            (["--steps", "--json"], "--steps needs a value (found the option --json instead)"),
            (["--seed"], "--seed needs a value"),
            (["--json=false"], "--json takes no value (found \"false\")"),
            (["--seed", "1", "--seed=2"], "--seed is given twice; give each option once"),
            (["--verbose", "stray"], "unknown option stray"),
        ])
    func soakUsageErrors(_ arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try SoakOptions.parse(arguments) }
    }

    @Test(
        "-h, --help and --version win anywhere in the demo's and the soak's command lines, bad ones too",
        arguments: [
            (["--speed", "-h"], Request.help), (["--bogus", "--help"], .help),
            (["--steps", "0", "--version"], .version), (["--raw=no", "--version", "-h"], .version),
        ])
    func informationAnywhere(_ arguments: [String], request: Request) throws {
        #expect(try DemoOptions.parse(arguments) == (request == .help ? .help : .version))
        #expect(try SoakOptions.parse(arguments) == (request == .help ? .help : .version))
    }

    @Test("The soak's --help names its summary event as it is printed")
    func soakHelpNamesTheEvent() {
        #expect(
            SoakOptions.command.help.contains("(event \(EventName.soakSummary.rawValue))"),
            "\(SoakOptions.command.help)")
    }
}
