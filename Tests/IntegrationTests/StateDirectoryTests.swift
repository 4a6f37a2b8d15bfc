// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A phone and a watch never share a state dir, and a refused process names who holds it.
@Suite("state dir ownership", .serialized)
struct StateDirectoryTests {
    @Test("A state dir every user can write: the phone starts and says so on stderr; mode 0700 says nothing")
    func worldWritableStateDirectory() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        for (mode, warned) in [(0o777 as mode_t, true), (0o700, false)] {
            let directory = "\(scenario.dir)/phone-\(String(mode, radix: 8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            #expect(chmod(directory, mode) == 0)
            let phone = try scenario.phone(stateDir: "phone-\(String(mode, radix: 8))")
            try phone.expect(.phoneStarted)
            phone.stop(signal: SIGTERM, timeout: 10)
            phone.waitForOutputEnd(timeout: 5)
            #expect(phone.exitStatus == 0, "\(phone.standardError)")
            #expect(
                phone.standardError.contains("is mode 777, writable by every user") == warned, "\(phone.standardError)")
        }
    }

    @Test("A watch on the state dir of a running phone: exit 73 naming the phone and its pid")
    func watchOnRunningPhonesDirectory() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        let watch = try scenario.runToExit(
            "watch", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone"])
        #expect(watch.status == 73)
        #expect(
            watch.stderr.contains("in use by a running phone (pid \(phone.pid))"), "stderr: \(watch.stderr)")
        #expect(phone.isRunning)
    }

    @Test(
        "A process on the state dir the other program left (stopped): exit 73 naming its file, nothing written",
        arguments: [("phone", "watch", "phone.json"), ("watch", "phone", "watch.json")])
    func otherProgramsStoppedDirectory(_ owner: String, _ intruder: String, _ ownerFile: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // The phone writes phone.json at start; the watch writes watch.json once it applied a batch.
        let first: ChildProcess
        if owner == "phone" {
            first = try scenario.phone(stateDir: "shared")
            try first.expect(.phoneStarted)
        } else {
            _ = try scenario.phone()
            first = try scenario.watch(stateDir: "shared")
            try first.expect(.batchApplied)
        }
        #expect(first.stop(signal: SIGTERM, timeout: 5) == 0)
        let directory = "\(scenario.dir)/shared"
        try #require(FileManager.default.fileExists(atPath: "\(directory)/\(ownerFile)"))
        let before = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        let lockRecord = try String(contentsOfFile: "\(directory)/.lock", encoding: .utf8)
        #expect(lockRecord.hasSuffix(" \(owner)\n"), "\(lockRecord)")
        let second = try scenario.runToExit(
            intruder, ["--endpoint", "ipc://\(scenario.dir)/other.sock", "--state-dir", directory])
        #expect(second.status == 73)
        #expect(second.stderr.contains("holds \(ownerFile), a \(owner)'s state"), "stderr: \(second.stderr)")
        let after = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(after == before, "the \(intruder) wrote into the \(owner)'s state dir")
        // The lock's record still names the owner: the refused process wrote nothing there.
        #expect(try String(contentsOfFile: "\(directory)/.lock", encoding: .utf8) == lockRecord)
    }
}
