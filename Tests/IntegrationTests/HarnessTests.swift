// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The process runner the tests share starts every child the same way.
@Suite("the shared process runner")
struct HarnessTests {
    @Test("A run to the end is a tracked child: it gets SLEEPTAP_PARENT_PID, this process's pid")
    func capturedRunIsAChildProcess() throws {
        let result = try CapturedRun.run("env", [], executable: URL(fileURLWithPath: "/usr/bin/env"), timeout: 10)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.lines.map(\.text).contains("SLEEPTAP_PARENT_PID=\(getpid())"),
            "the child's SLEEPTAP_ variables: \(result.lines.map(\.text).filter { $0.hasPrefix("SLEEPTAP_") })")
    }

    @Test("A run to the end keeps every stdout line, events and others, in order, with its arrival")
    func capturedRunKeepsEveryLine() throws {
        let script = #"echo plain; echo '{"event":"x.y"}'; echo last; echo oops >&2; exit 3"#
        let started = Date()
        let result = try CapturedRun.run(
            "sh", ["-c", script], executable: URL(fileURLWithPath: "/bin/sh"), timeout: 10)
        #expect(result.status == 3)
        #expect(result.lines.map(\.text) == ["plain", #"{"event":"x.y"}"#, "last"])
        #expect(result.lines.allSatisfy { $0.arrived >= started && $0.arrived <= Date() })
        #expect(result.standardError == "oops\n")
    }

    @Test("A run's temp dir is private (0700) under /tmp; one that cannot be made names its template and why")
    func temporaryDirectory() throws {
        let dir = try Reaper.shared.makeTemporaryDirectory(prefix: "sleeptap-ht", removeOnExit: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(dir.hasPrefix("/tmp/sleeptap-ht-") && dir.utf8.count == "/tmp/sleeptap-ht-XXXXXX".utf8.count)
        let mode = try #require(FileManager.default.attributesOfItem(atPath: dir)[.posixPermissions] as? Int)
        #expect(mode == 0o700)
        let error = try #require(throws: TemporaryDirectoryError.self) {
            try Reaper.shared.makeTemporaryDirectory(prefix: "sleeptap-no-such-dir/x")
        }
        #expect(
            error.description
                == "cannot create a temp dir /tmp/sleeptap-no-such-dir/x-XXXXXX: No such file or directory")
    }
}
