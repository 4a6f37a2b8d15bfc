// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The ipc socket lives in a directory only its user can enter.
@Suite("ipc socket directory", .serialized)
struct SecurityTests {
    @Test("A socket directory other users can reach is refused (exit 69, with the fix), unless --insecure")
    func openDirectoryRefused() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let shared = "\(scenario.dir)/shared"
        #expect(mkdir(shared, 0o755) == 0 && chmod(shared, 0o755) == 0)
        let endpoint = "ipc://\(shared)/phone.sock"
        let refused = try scenario.runToExit("phone", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/p"])
        #expect(refused.status == 69)
        #expect(refused.stderr.contains("is mode 755"), "\(refused.stderr)")
        let user = String(cString: try #require(getpwuid(geteuid())?.pointee.pw_name))
        #expect(refused.stderr.contains("ipc://\(shared)/sleeptap-\(user)/phone.sock"), "\(refused.stderr)")
        // chmod is advised for a directory of one's own, never to root, whose directories may be
        // system directories other users need.
        #expect(refused.stderr.contains("chmod 700 \(shared)") == (geteuid() != 0), "\(refused.stderr)")
        let watch = try scenario.runToExit("watch", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/w"])
        #expect(watch.status == 69)
        // Refused before anything is made: neither state dir exists.
        #expect(!FileManager.default.fileExists(atPath: "\(scenario.dir)/p"))
        #expect(!FileManager.default.fileExists(atPath: "\(scenario.dir)/w"))
        let allowed = try scenario.spawn(
            "phone", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/p", "--insecure"])
        try allowed.expect(.phoneStarted)
    }

    @Test(
        "A socket directly in a shared directory such as /tmp: the advice is a private subdirectory, never chmod /tmp")
    func sharedDirectoryAdvice() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let name = "sleeptap-advice-\(getpid()).sock"
        let user = String(cString: try #require(getpwuid(geteuid())?.pointee.pw_name))
        for program in ["phone", "watch"] {
            let result = try scenario.runToExit(
                program, ["--endpoint", "ipc:///tmp/\(name)", "--state-dir", "\(scenario.dir)/\(program)"])
            #expect(result.status == 69)
            #expect(result.stderr.contains("ipc:///tmp/sleeptap-\(user)/\(name)"), "\(program): \(result.stderr)")
            #expect(!result.stderr.contains("chmod"), "\(program): \(result.stderr)")
        }
        #expect(access("/tmp/\(name)", F_OK) != 0, "nothing was bound")
    }

    @Test("A missing socket directory is created 0700")
    func createdPrivate() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.spawn(
            "phone", ["--endpoint", "ipc://\(scenario.dir)/new/phone.sock", "--state-dir", "\(scenario.dir)/p"])
        try phone.expect(.phoneStarted)
        var info = stat()
        #expect(stat("\(scenario.dir)/new", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    /// Acting as another user (nobody) takes root and runuser(1); CI runs as root.
    static let canActAsAnotherUser = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")

    @Test(
        "Another user's process cannot reach the phone's socket",
        .enabled(if: canActAsAnotherUser, "needs root and runuser(1) to act as another user (nobody)"))
    func otherUserRefused() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        let socketPath = String(scenario.endpoint.dropFirst("ipc://".count))
        // The owner reaches it; nobody does not (no search permission on the 0700 directory).
        #expect(access(socketPath, F_OK) == 0)
        let probe = try ChildProcess(
            name: "probe", executable: URL(fileURLWithPath: "/usr/sbin/runuser"),
            arguments: ["-u", "nobody", "--", "/usr/bin/stat", socketPath])
        #expect(probe.waitForExit(timeout: Scenario.deadline))
        probe.waitForOutputEnd(timeout: 5)
        #expect(probe.exitStatus != 0)
        #expect(probe.standardError.contains("Permission denied"), "\(probe.standardError)")
    }

    @Test(
        "Another user's watch and phone are told permission denied, naming the path, its owner and mode",
        .enabled(if: canActAsAnotherUser, "needs root and runuser(1) to act as another user (nobody)"))
    func otherUserPermissionDenied() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // A directory nobody may write (for nobody's state dirs), removed with the scenario's.
        var template = Array("/tmp/sleeptap-nobody-XXXXXX".utf8CString)
        let open = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: open) }
        #expect(chmod(open, 0o777) == 0)
        // The build may lie below a directory nobody cannot enter (a clone in a 0700 temp dir):
        // run copies of the executables from the open directory instead.
        for program in ["watch", "phone"] {
            try FileManager.default.copyItem(
                atPath: try Scenario.executable(program).path, toPath: "\(open)/\(program)")
            #expect(chmod("\(open)/\(program)", 0o755) == 0)
        }
        func asNobody(_ program: String, _ arguments: [String]) throws -> (status: Int32?, stderr: String) {
            let child = try scenario.spawn(
                "runuser", ["-u", "nobody", "--", "\(open)/\(program)"] + arguments,
                executable: URL(fileURLWithPath: "/usr/sbin/runuser"))
            #expect(child.waitForExit(timeout: Scenario.deadline) && child.waitForOutputEnd(timeout: 5))
            return (child.exitStatus, child.standardError)
        }
        let watch = try asNobody("watch", ["--endpoint", scenario.endpoint, "--state-dir", "\(open)/w", "--insecure"])
        #expect(watch.status == 69)
        #expect(
            watch.stderr.contains(
                "permission denied: cannot reach \(scenario.dir)/phone.sock: the directory \(scenario.dir) is "
                    + "owned by root (uid 0), mode 0700"), "\(watch.stderr)")
        #expect(!watch.stderr.contains("is it running"))
        let phone = try asNobody(
            "phone", ["--endpoint", "ipc://\(open)/s/phone.sock", "--state-dir", "\(scenario.dir)/p"])
        #expect(phone.status == 73)
        #expect(
            phone.stderr.contains(
                "\(scenario.dir)/p: cannot create directory: Permission denied (\(scenario.dir) is owned by root "
                    + "(uid 0), mode 0700; this process runs as nobody)"), "\(phone.stderr)")
    }

    @Test("A relative ipc path: phone and watch started in two directories meet at the same absolute socket")
    func relativeEndpoint() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let socketDirectory = "\(scenario.dir)/run"
        #expect(mkdir(socketDirectory, 0o700) == 0)
        let absolute = "ipc://\(socketDirectory)/p.sock"
        // env(1) -C starts each in its own working directory: dir for the phone, dir/run for the watch.
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let phone = try scenario.spawn(
            "env",
            [
                "-C", scenario.dir, try Scenario.executable("phone").path, "--endpoint", "ipc://run/p.sock",
                "--state-dir", "\(scenario.dir)/p",
            ], executable: env)
        let phoneStarted = try phone.expect(.phoneStarted).event
        #expect(phoneStarted.string("endpoint") == absolute)
        let watch = try scenario.spawn(
            "env",
            [
                "-C", socketDirectory, try Scenario.executable("watch").path, "--endpoint", "ipc://./p.sock",
                "--state-dir", "\(scenario.dir)/w",
            ], executable: env)
        let watchStarted = try watch.expect(.watchStarted).event
        #expect(watchStarted.string("endpoint") == absolute)
        try watch.expect(.batchApplied) { $0.int("seq") == 1 }
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
    }
}
