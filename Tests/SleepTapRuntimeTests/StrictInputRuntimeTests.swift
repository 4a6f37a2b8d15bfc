// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import Testing

@testable import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// Inputs the runtime takes from the user that were accepted although they were ambiguous or
/// unsafe: an option given twice, keys others may write, a socket path whose directory is not
/// a directory, state files that are not strict JSON, too large or inconsistent.
@Suite("Strict inputs: options, keys, ipc paths, state files", .serialized)
struct StrictInputRuntimeTests {
    static func usageMessage(_ parse: () throws -> Void) -> String? {
        do {
            try parse()
            return nil
        } catch {
            return (error as? UsageError)?.message ?? "\(error)"
        }
    }

    @Test(
        "An option given twice is a usage error naming it, in either form",
        arguments: [
            (["--endpoint", "ipc:///r/a.sock", "--endpoint", "ipc:///r/b.sock"], "--endpoint"),
            (["--time-zone", "UTC", "--time-zone", "Europe/Berlin"], "--time-zone"),
            (["--insecure", "--insecure"], "--insecure"),
            (["--clock-speed=2", "--clock-speed", "3"], "--clock-speed"),
        ])
    func repeatedOption(extra: [String], flag: String) throws {
        let base =
            extra.contains("--endpoint")
            ? ["--state-dir", "/s"] : ["--endpoint", "ipc:///r/p.sock", "--state-dir", "/s"]
        let arguments = base + extra
        for program in ["phone", "watch"] {
            let message = Self.usageMessage {
                _ =
                    try program == "phone"
                    ? CommandLineParser.parsePhone(arguments).isRun : CommandLineParser.parseWatch(arguments).isRun
            }
            #expect(message == "\(flag) is given twice; give each option once", "\(program) \(arguments)")
        }
        #expect(
            Self.usageMessage { _ = try CommandLineParser.parseKeygen(["--dir", "a", "--dir=b"]) }
                == "--dir is given twice; give each option once")
    }

    static func keysDirectory() throws -> String {
        let dir = try CertificateTests.tempDir()
        _ = try Pairing.generate(into: dir, role: .phone)
        _ = try Pairing.generate(into: dir, role: .watch)
        #expect(try Pairing.load(directory: dir, role: .phone).peerPublicKey.count == 40)
        return dir
    }

    @Test("A keys directory or certificate other users may write is refused, naming the path and its mode")
    func keysWritableByOthers() throws {
        let dir = try Self.keysDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(chmod(dir, 0o777) == 0)
        #expect(throws: FileError.self) { try Pairing.load(directory: dir, role: .phone) }
        do {
            _ = try Pairing.load(directory: dir, role: .watch)
            Issue.record("a 0777 keys directory was accepted")
        } catch {
            #expect(error.path == dir)
            #expect(error.reason.hasPrefix("the keys directory is mode 777: other users may write to it"), "\(error)")
        }
        #expect(chmod(dir, 0o700) == 0)
        let peer = Pairing.publicCertificatePath(dir, .watch)
        #expect(chmod(peer, 0o666) == 0)
        do {
            _ = try Pairing.load(directory: dir, role: .phone)
            Issue.record("a 0666 watch.key was accepted")
        } catch {
            #expect(error.path == peer)
            #expect(error.reason.hasPrefix("the certificate is mode 666"), "\(error)")
        }
        #expect(chmod(peer, 0o644) == 0)
        #expect(try Pairing.load(directory: dir, role: .phone).peerPublicKey.count == 40)
    }

    @Test("keygen refuses a directory other users may write, and writes nothing there")
    func keygenIntoOpenDirectory() throws {
        let dir = try CertificateTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(chmod(dir, 0o777) == 0)
        #expect(throws: FileError.self) { try Pairing.generate(into: dir, role: .watch) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test("An ipc path whose directory is a regular file says so, and advises no chmod")
    func socketDirectoryIsAFile() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/afile", contents: Data("x".utf8)))
        for create in [true, false] {
            let problem = try #require(
                IPCDirectoryPolicy.problem(for: .ipc(path: "\(dir)/afile/p.sock"), create: create))
            #expect(problem.contains("\(dir)/afile is not a directory (a regular file)"), "\(problem)")
            #expect(!problem.contains("chmod"), "\(problem)")
            let deeper = try #require(
                IPCDirectoryPolicy.problem(for: .ipc(path: "\(dir)/afile/x/p.sock"), create: create))
            #expect(deeper.contains("\(dir)/afile is not a directory"), "\(deeper)")
        }
    }

    @Test("A socket in / or an ipc path that is a directory: never advise chmod or a directory in /")
    func socketInRoot() throws {
        let user = EndpointDiagnosis.userName(geteuid())
        let inRoot = try #require(
            IPCDirectoryPolicy.problem(for: .ipc(path: "/sleeptap-\(getpid()).sock"), create: true))
        #expect(inRoot.contains("the socket would be in / (the root directory)"), "\(inRoot)")
        #expect(inRoot.contains("ipc:///tmp/sleeptap-\(user)/sleeptap-\(getpid()).sock"), "\(inRoot)")
        let directory = try #require(IPCDirectoryPolicy.problem(for: .ipc(path: "/tmp"), create: true))
        #expect(
            directory.hasPrefix("/tmp is a directory; an ipc endpoint names the socket file itself"), "\(directory)")
        #expect(directory.contains("ipc:///tmp/sleeptap-\(user)/phone.sock"), "\(directory)")
        for problem in [inRoot, directory] {
            #expect(!problem.contains("chmod"), "\(problem)")
            #expect(!problem.contains("ipc:///sleeptap-"), "\(problem)")
        }
    }

    @Test(
        "A state file that is not strict JSON or names a key twice is moved aside with the reason",
        arguments: [
            ("{\"lastAppliedSeq\": 0,}", "not valid JSON: line 1, column 22"),
            ("{\"lastAppliedSeq\": 0, \"lastAppliedSeq\": 0}", "key lastAppliedSeq appears twice"),
            ("{\"lastAppliedSeq\": 5}", "lastAppliedSeq 5 with no batch"),
            (
                "{\"lastAppliedSeq\": 0, \"alarms\": [\"2026-06-21T22:00:00Z\", \"2026-06-20T22:00:00Z\"]}",
                "alarms must be in time order without repeats (2026-06-20T22:00:00Z follows 2026-06-21T22:00:00Z)"
            ),
            ("{\"lastAppliedSeq\": 0, \"alarms\": [\"tomorrow\"]}", "alarms"),
            ("{\"lastAppliedSeq\": 0, \"alarms\": \"2026-06-20T22:00:00Z\"}", "alarms"),
        ])
    func stateFileStrict(text: String, reason: String) throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/watch.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        let file = StateFile<WatchSyncState>(path: path)
        let (value, recovery) = try file.loadRecovering(validate: \.validationProblem)
        #expect(value == nil)
        let report = try #require(recovery)
        #expect(report.reason.contains(reason), "\(report.reason)")
        #expect(report.movedTo != nil && access(path, F_OK) != 0)
    }

    @Test("A watch state file with alarms reads them; one written before alarms were stored reads as none")
    func stateFileAlarms() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/watch.json"
        let file = StateFile<WatchSyncState>(path: path)
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{\"lastAppliedSeq\": 0}".utf8)))
        #expect(try file.loadRecovering(validate: \.validationProblem).value == WatchSyncState())
        let wake = try #require(ISO8601.date("2026-06-20T22:00:00Z"))
        try file.save(WatchSyncState(alarms: [wake]))
        let (value, recovery) = try file.loadRecovering(validate: \.validationProblem)
        #expect(recovery == nil && value?.alarms == [wake])
        try file.save(WatchSyncState())
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("alarms"), "\(text)")
    }

    @Test("A state file over 16 MiB is moved aside without being read")
    func stateFileTooLarge() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/phone.json"
        // A sparse file: 17 MiB long, no blocks written.
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0 && ftruncate(fd, off_t(17 << 20)) == 0)
        close(fd)
        let (value, recovery) = try StateFile<PhoneSyncState>(path: path).loadRecovering(
            validate: \.validationProblem)
        #expect(value == nil)
        let report = try #require(recovery)
        #expect(report.reason.contains("17825792 bytes, over the 16 MiB (16777216-byte) limit"), "\(report.reason)")
        #expect(report.movedTo != nil)
    }
}

extension Parsed {
    /// Whether it is `.run` (to use a parse result in an expression).
    var isRun: Bool {
        if case .run = self { return true }
        return false
    }
}

/// `--schedule` naming a directory says so.
@Suite("schedule file paths")
struct ScheduleFilePathTests {
    @Test("a directory as --schedule: 'is a directory', not 'missing or not a file'")
    func directory() throws {
        let directory = FileManager.default.temporaryDirectory.path
        guard case .failure(let error) = PhoneRuntime.loadSchedule(directory) else {
            Issue.record("a directory loaded as a schedule")
            return
        }
        #expect(error.description.contains("is a directory"), "\(error.description)")
        guard case .failure(let missing) = PhoneRuntime.loadSchedule(directory + "/no-such-schedule.json") else {
            Issue.record("a missing file loaded as a schedule")
            return
        }
        #expect(!missing.description.contains("is a directory"), "\(missing.description)")
    }
}
