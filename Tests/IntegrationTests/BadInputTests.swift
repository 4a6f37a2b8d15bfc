// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Bad arguments, files and messages against the real executables: a clear message, the
/// documented exit status, no state overwritten, no crash.
@Suite("bad input", .serialized)
struct BadInputTests {
    @Test("Bad arguments: exit 64 with a message naming the flag", arguments: ["phone", "watch"])
    func badArguments(_ program: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let result = try scenario.runToExit(program, ["--endpoint", "tcp//nope", "--state-dir", scenario.dir])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--endpoint \"tcp//nope\""), "stderr: \(result.stderr)")
        let missing = try scenario.runToExit(program, [])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--endpoint is required"))
        let help = try scenario.runToExit(program, ["--help"])
        #expect(help.status == 0)
    }

    @Test(
        "A virtual clock that reaches the end of 2199 stops the process (exit 64, the stopping line says why); its state reads back",
        arguments: ["phone", "watch"])
    func clockRangeEnd(_ program: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        func start(_ clock: [String]) throws -> ChildProcess {
            program == "phone" ? try scenario.phone(clock) : try scenario.watch(clock)
        }
        // 59 virtual seconds at 120×: the end comes half a second after the start.
        let child = try start(["--clock-start", "2199-12-31T23:59:00Z", "--clock-speed", "120"])
        try #require(child.waitForExit(timeout: 20))
        child.waitForOutputEnd(timeout: 5)
        #expect(child.exitStatus == 64, "\(child.standardError)")
        #expect(child.standardError.contains("virtual time reached 2199-12-31T23:59:59Z"), "\(child.standardError)")
        let last = try #require(child.events.last)
        #expect(last.rawName == "\(program).stopping", "\(last)")
        #expect(last.string("reason") == "virtual time reached the end of 2199")
        #expect(child.events.allSatisfy { ($0.string("time") ?? "").hasPrefix("2199-12-31T23:59:") })
        // The next start on the same state dir reads what it wrote: nothing is moved aside.
        let again = try start(["--clock-start", "2199-12-31T12:00:00Z"])
        let started: EventName = program == "phone" ? .phoneStarted : .watchStarted
        #expect(again.waitFor(started, timeout: 10) != nil, "\(again.standardError)")
        #expect(again.events.allSatisfy { $0.rawName != EventName.stateRecovered.rawValue }, "\(again.events)")
    }

    @Test(
        "Installed under another name (sleeptap-watch), a bad argument's hint names that command, not procps' watch",
        arguments: ["phone", "watch"])
    func hintUsesInvokedName(_ program: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let link = "\(scenario.dir)/sleeptap-\(program)"
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: try Scenario.executable(program).path)
        let child = try scenario.spawn(program, ["--frobnicate"], executable: URL(fileURLWithPath: link))
        try #require(child.waitForExit(timeout: 10))
        child.waitForOutputEnd(timeout: 5)
        #expect(child.exitStatus == 64)
        #expect(child.standardError.contains("(see sleeptap-\(program) --help)"), "\(child.standardError)")
    }

    @Test(
        "--version prints the package's one version string and --help wins after bad flags, exit 0",
        arguments: [
            "phone", "watch", "sleeptap-demo", "sleeptap-soak", "sleeptap-scenario", "sleeptap-report",
            "sleeptap-fleet", "sleeptap-bench", "sleeptap-calibrate", "sleeptap-compare",
        ])
    func versionAndHelp(_ program: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let version = try scenario.spawn(program, ["--frob", "--version"])
        #expect(version.waitForExit(timeout: 10) && version.waitForOutputEnd(timeout: 5))
        #expect(version.exitStatus == 0, "stderr: \(version.standardError)")
        #expect(version.otherOutputLines == [SleepTapVersion.line(program)])
        for arguments in [["--bogus-after", "-h"], ["--frob", "--help"], ["--speed", "-h"]] {
            let help = try scenario.runToExit(program, arguments)
            #expect(help.status == 0, "\(program) \(arguments): \(help.stderr)")
        }
    }

    @Test("keygen --help (or -h anywhere) prints its usage, exit 0, and creates nothing")
    func keygenHelp() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        for program in ["phone", "watch"] {
            for arguments in [["keygen", "--help"], ["keygen", "--dir", "\(scenario.dir)/keys", "-h"]] {
                let help = try scenario.spawn(program, arguments)
                #expect(help.waitForExit(timeout: 10) && help.waitForOutputEnd(timeout: 5))
                #expect(help.exitStatus == 0, "\(arguments): \(help.standardError)")
                #expect(
                    help.otherOutputLines.first?.hasPrefix("usage: \(program) keygen") == true,
                    "\(help.otherOutputLines)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: "\(scenario.dir)/keys"))
    }

    @Test("phone --os-model: a file that is not a usable model exits 65 naming it; nothing bound or written")
    func badOSModel() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let path = "\(scenario.dir)/model.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{\"kind\": \"other\"}".utf8)))
        let result = try scenario.runToExit(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--os-model", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("--os-model \(path): kind: expected"), "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(scenario.dir)/p"))
    }

    @Test("A bad schedule file: exit 65 naming the file, field and value; nothing bound or written")
    func badSchedule() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let path = "\(scenario.dir)/schedule.json"
        let text = """
            {"schemaVersion": 1, "wake": {"monday": "07:00", "tuesday": "7:00", "wednesday": "07:00",
             "thursday": "07:00", "friday": "07:00", "saturday": "off", "sunday": "off"}}
            """
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        let result = try scenario.runToExit(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--schedule", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("schedule file \(path): wake.tuesday = \"7:00\""), "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(scenario.dir)/p"))
        let absent = try scenario.runToExit(
            "phone",
            [
                "--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--schedule",
                "\(scenario.dir)/nope.json",
            ])
        #expect(absent.status == 65)
        #expect(absent.stderr.contains("nope.json: cannot be read"))
        let broken = "\(scenario.dir)/broken.json"
        let brokenText = "{\"schemaVersion\": 1,\n \"wake\": {\"monday\": \"07:00\" \"tuesday\": \"07:00\"}}"
        #expect(FileManager.default.createFile(atPath: broken, contents: Data(brokenText.utf8)))
        let syntax = try scenario.runToExit(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--schedule", broken])
        #expect(syntax.status == 65)
        #expect(
            syntax.stderr.contains(
                "schedule file \(broken): not valid JSON: line 2, column 29: expected ',' or '}' after a member, found '\"'"
            ),
            "stderr: \(syntax.stderr)")
    }

    @Test(
        "A corrupt state file is reported, moved aside intact, and the process starts clean, saying so",
        arguments: ["phone", "watch"])
    func corruptState(_ program: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let stateDir = "\(scenario.dir)/\(program)"
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let path = "\(stateDir)/\(program).json"
        let garbage = Data("{\"lastSeq\":".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: garbage))
        let child = program == "phone" ? try scenario.phone() : try scenario.watch()
        let recovered = try child.expect(.stateRecovered).event
        #expect(recovered.string("path") == path)
        #expect(recovered.string("from") == "clean start")
        let movedTo = try #require(recovered.string("movedTo"))
        #expect(FileManager.default.contents(atPath: movedTo) == garbage, "the bad file is kept, byte for byte")
        try child.expect(program == "phone" ? .phoneStarted : .watchStarted)
        #expect(child.isRunning)
    }

    @Test(
        "A missing state file with a corrupt previous copy: the clean start says so, in an event and on stderr",
        arguments: ["phone", "watch"])
    func missingStateCorruptPrevious(_ program: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let stateDir = "\(scenario.dir)/\(program)"
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let previous = "\(stateDir)/\(program).json.prev"
        let garbage = Data("{\"lastSeq\": 4, \"outb".utf8)
        #expect(FileManager.default.createFile(atPath: previous, contents: garbage))
        let child = program == "phone" ? try scenario.phone() : try scenario.watch()
        let recovered = try child.expect(.stateRecovered).event
        #expect(recovered.string("from") == "clean start")
        #expect(recovered.string("reason") == "missing")
        #expect(recovered.string("previousReason")?.hasPrefix("not a valid state file") == true, "\(recovered)")
        let movedTo = try #require(recovered.string("previousMovedTo"))
        #expect(FileManager.default.contents(atPath: movedTo) == garbage, "the bad copy is kept, byte for byte")
        try child.expect(program == "phone" ? .phoneStarted : .watchStarted)
        child.waitForStandardError(containing: "starting clean", timeout: Scenario.deadline)
        #expect(child.standardError.contains("\(previous) is not usable"), "stderr: \(child.standardError)")
        #expect(child.standardError.contains("moved aside to \(movedTo); starting clean"))
    }

    @Test("Temp files left by killed saves are removed at start, only when their process is gone")
    func staleTemporaryFiles() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let stateDir = "\(scenario.dir)/phone"
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let reaped = try scenario.spawn(
            "true", [], executable: URL(fileURLWithPath: "/bin/true"), standardInput: FileHandle.nullDevice)
        #expect(reaped.waitForExit(timeout: 10), "/bin/true did not exit")
        let stale = ["\(stateDir)/phone.json.tmp-\(reaped.pid)"]
        let live = ["\(stateDir)/phone.json.tmp-\(getpid())", "\(stateDir)/phone.json.prev.tmp-\(getpid())"]
        for path in stale + live {
            #expect(FileManager.default.createFile(atPath: path, contents: Data("{\"lastSeq\":".utf8)))
        }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        for path in stale { #expect(!FileManager.default.fileExists(atPath: path), "\(path) removed") }
        for path in live { #expect(FileManager.default.fileExists(atPath: path), "\(path) kept: its process lives") }
    }

    @Test("A state file that decodes but breaks the rules (outbox above lastSeq) is refused the same way")
    func invalidState() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let stateDir = "\(scenario.dir)/phone"
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let text = """
            {"lastSeq": 1, "acked": false, "outbox": {"seq": 5, "generatedAt": "2025-03-06T17:00:00Z",
             "timeZone": "UTC", "entries": []}}
            """
        #expect(FileManager.default.createFile(atPath: "\(stateDir)/phone.json", contents: Data(text.utf8)))
        let phone = try scenario.phone()
        let recovered = try phone.expect(.stateRecovered).event
        #expect(recovered.string("reason") == "outbox.seq 5 is above lastSeq 1")
    }

    @Test("A state file of valid JSON with a negative seq names the field and the value, not 'not valid JSON'")
    func negativeSeqState() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let stateDir = "\(scenario.dir)/phone"
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let text = "{\"lastSeq\": -1, \"acked\": false}"
        #expect(FileManager.default.createFile(atPath: "\(stateDir)/phone.json", contents: Data(text.utf8)))
        let phone = try scenario.phone()
        let recovered = try phone.expect(.stateRecovered).event
        #expect(recovered.string("reason") == "not a valid state file: field lastSeq = -1: must not be negative")
    }

    @Test("A state dir that cannot be created: its path and the system's words, not a Foundation error code")
    func uncreatableStateDirectory() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let file = "\(scenario.dir)/plain"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        for program in ["phone", "watch"] {
            let result = try scenario.runToExit(
                program, ["--endpoint", scenario.endpoint, "--state-dir", "\(file)/state"])
            #expect(result.status == 73)
            #expect(
                result.stderr.contains("state dir \(file)/state: cannot create directory: Not a directory"),
                "stderr: \(result.stderr)")
            #expect(!result.stderr.contains("NSCocoaErrorDomain"))
        }
    }

    @Test(
        "A tcp host name that does not resolve: exit 69 saying so, not ENODEV or a silent retry",
        arguments: ["phone", "watch"])
    func unresolvableHost(_ program: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // RFC 6761: names under .invalid never resolve.
        let result = try scenario.runToExit(
            program, ["--endpoint", "tcp://nohost.invalid:5555", "--state-dir", "\(scenario.dir)/s", "--insecure"])
        #expect(result.status == 69)
        #expect(
            result.stderr.contains("tcp://nohost.invalid:5555: the host name nohost.invalid could not be resolved"),
            "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("ENODEV"))
    }

    @Test("A plaintext watch against a CURVE phone: the handshake failure in words, not a raw libzmq code")
    func plaintextAgainstCurve() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try CurveLinkTests.pair(scenario)
        let (_, endpoint) = try CurveLinkTests.phone(scenario, keys: keys.phone)
        let watch = try scenario.watch(["--insecure"], endpoint: endpoint)
        // ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH (a connection torn down first may say EPIPE).
        let failed = try watch.expect(.linkHandshakeFailed) { $0.int("code") == 0x1100_0002 }.event
        let reason = try #require(failed.string("reason"))
        #expect(reason.contains("different security mechanisms: one requires CURVE, the other uses none"), "\(reason)")
        #expect(reason.contains("ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH"))
        #expect(!reason.contains("285212674"))
    }

    @Test("A state file that cannot be read at all (a directory in its place): exit 65, nothing touched")
    func unreadableState() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let path = "\(scenario.dir)/w/watch.json"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try scenario.runToExit(
            "watch", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/w"])
        #expect(result.status == 65)
        #expect(result.stderr.contains(path), "\(result.stderr)")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test("An endpoint that cannot be bound: exit 69 with the endpoint and libzmq's reason")
    func unbindable() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // 192.0.2.1 (TEST-NET-1) is no address of this machine: bind fails, nothing is sent.
        let endpoint = "tcp://192.0.2.1:5555"
        let result = try scenario.runToExit(
            "phone", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/p", "--insecure"])
        #expect(result.status == 69)
        #expect(result.stderr.contains("cannot bind \(endpoint)"), "stderr: \(result.stderr)")
    }

    @Test("Garbage from a peer and from an unknown routing id: rejected with a reason, the phone keeps serving")
    func roguePeers() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.dealer) { rogue in
            try rogue.setLinger(milliseconds: 0)
            try rogue.setRoutingId(Array("watch".utf8))
            try rogue.connect(scenario.endpoint)
            for frame in [
                "{", "{\"v\":9,\"type\":\"HELLO\",\"lastSeq\":0}",
                "{\"v\":1,\"type\":\"ACK\",\"epoch\":\"00000000000000a1\",\"seq\":-3}",
            ] {
                try rogue.send(Array(frame.utf8))
            }
            try rogue.send([Array("two".utf8), Array("frames".utf8)])
            var replies: [String] = []
            var items = [PollItem.socket(rogue, events: .readable)]
            let deadline = Date().addingTimeInterval(Scenario.deadline)
            while replies.filter({ $0.contains("\"type\":\"ERROR\"") }).count < 4 && Date() < deadline {
                if try poll(&items, timeoutMilliseconds: 200) > 0 {
                    replies.append(String(decoding: try rogue.receive().last ?? [], as: UTF8.self))
                }
            }
            #expect(replies.filter { $0.contains("\"type\":\"ERROR\"") }.count == 4, "\(replies)")
        }
        try context.withSocket(.dealer) { stranger in
            try stranger.setLinger(milliseconds: 2000)  // let the message out before close
            try stranger.setRoutingId(Array("mallory".utf8))
            try stranger.connect(scenario.endpoint)
            try stranger.send(WireCodec.encode(.hello(nil)))
        }
        try phone.expect(.messageRejected) { $0.string("reason") == "unknown peer routing id \"mallory\"" }
        let rejected = phone.events.filter { $0.name == .messageRejected }.compactMap { $0.string("reason") }
        #expect(rejected.contains("not valid JSON"))
        #expect(rejected.contains("unsupported protocol version 9 (this build speaks 1)"))
        #expect(rejected.contains("field seq must be a non-negative integer"))
        #expect(rejected.contains { $0.hasPrefix("expected 2 frames") })
        // Still alive and still serving the real watch.
        let watch = try scenario.watch()
        try watch.expect(.batchApplied) { $0.int("seq") == 1 }
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        #expect(phone.isRunning)
    }

    @Test("The demo (the README's main job) plays the whole story and exits 0; --speed, --raw and --keep take effect")
    func demo() throws {
        let speed = 172_800.0
        let result = try CapturedRun.run("sleeptap-demo", ["--speed", "172800", "--raw", "--keep"], timeout: 120)
        // --raw: every event as a JSON line, as it arrives.
        let events = result.lines.compactMap { line -> (arrived: Date, fields: [String: Any])? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any] else {
                return nil
            }
            return (line.arrived, object)
        }
        // --keep: the temp dir named by the phone's endpoint stays, and the demo says so.
        let endpoint = try #require(
            events.lazy.compactMap { $0.fields["endpoint"] as? String }.first,
            "no JSON events with --raw:\n\(result.standardOutput)")
        let dir = URL(fileURLWithPath: String(endpoint.dropFirst("ipc://".count))).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(result.status == 0, "stderr: \(result.standardError)")
        #expect(result.lines.contains { $0.text == "state and sockets kept in \(dir)" }, "\(result.standardOutput)")
        #expect(FileManager.default.fileExists(atPath: "\(dir)/phone"))
        // --speed: virtual seconds per wall second from the first event to the last.
        let timed = events.compactMap { event in
            (event.fields["time"] as? String).flatMap(ISO8601.date).map { (wall: event.arrived, virtual: $0) }
        }
        let first = try #require(timed.first)
        let last = try #require(timed.last)
        let rate = last.virtual.timeIntervalSince(first.virtual) / last.wall.timeIntervalSince(first.wall)
        #expect(rate > speed / 2 && rate < speed * 2, "virtual time ran at \(Int(rate)) s per wall second")
    }
}

/// `sleeptap-demo --keep` ended by Ctrl-C still says where it kept its state.
@Suite("demo --keep interrupted")
struct DemoKeepInterruptTests {
    @Test("SIGINT during sleeptap-demo --keep: stderr names the kept directory, which exists")
    func interrupted() throws {
        let child = try ChildProcess(
            name: "sleeptap-demo", executable: Scenario.executable("sleeptap-demo"),
            arguments: ["--speed", "3600", "--raw", "--keep"], standardInput: FileHandle.nullDevice)
        let started = child.waitForLine(timeout: Scenario.deadline) { $0.contains("\"phone.started\"") }
        let line = try #require(started, "the demo's phone never started")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let endpoint = try #require(object["endpoint"] as? String)
        let dir = URL(fileURLWithPath: String(endpoint.dropFirst("ipc://".count))).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(child.stop(signal: SIGINT, timeout: 10) == 128 + SIGINT)
        child.waitForOutputEnd(timeout: 5)
        #expect(
            child.standardError.contains("sleeptap-demo: state and sockets kept in \(dir)"), "\(child.standardError)")
        #expect(FileManager.default.fileExists(atPath: dir))
    }
}
