// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bad values from the environment and the demo's arguments are named, with what is wrong.
@Suite("start-up inputs", .serialized)
struct StartUpInputTests {
    @Test(
        "SLEEPTAP_PARENT_PID that is not a pid is said on stderr, quoted, and the process goes on",
        arguments: ["phone", "watch"])
    func parentVariableNotAProcessID(_ name: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let child = try scenario.spawn(
            name, ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(name)"],
            environment: ["SLEEPTAP_PARENT_PID": "abc"])
        try child.expect(name == "phone" ? .phoneStarted : .watchStarted)
        #expect(
            child.waitForStandardError(
                containing: #"SLEEPTAP_PARENT_PID="abc" is not a process id"#, timeout: Scenario.deadline),
            "stderr: \(child.standardError)")
        #expect(child.stop(signal: SIGTERM, timeout: 5) == 0)
    }

    @Test(
        "sleeptap-demo --speed with a bad or missing value: exit 64 quoting the value",
        arguments: [
            (["--speed", "abc"], #"--speed "abc": not a number from 600 to 200000"#),
            (["--speed", "5"], #"--speed "5": not a number from 600 to 200000"#),
            (["--speed"], "--speed needs a value: a number from 600 to 200000"),
        ])
    func demoSpeed(_ arguments: [String], _ message: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let result = try scenario.runToExit("sleeptap-demo", arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("sleeptap-demo: " + message), "stderr: \(result.stderr)")
    }
}
