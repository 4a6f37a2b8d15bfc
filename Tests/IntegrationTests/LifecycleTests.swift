// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How phone and watch end: a closed stdout, end of file on stdin (terminal or not), SIGHUP.
@Suite("process lifecycle", .serialized)
struct LifecycleTests {
    @Test(
        "A closed stdout (`| head -n 1`) ends the process promptly with exit 0",
        arguments: ["phone", "watch"])
    func closedStandardOutput(_ name: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // bash runs `NAME ARGS | head -n 1` and exits with NAME's status (PIPESTATUS, bash(1)).
        // head exits after the first line; later lines hit EPIPE, or, when the process already
        // wrote everything and waits, its poll sees the pipe without a reader.
        let script = #""$0" "$@" | head -n 1; exit "${PIPESTATUS[0]}""#
        let arguments = ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(name)"]
        let shell = try scenario.spawn(
            "\(name) | head -n 1", ["-c", script, Scenario.executable(name).path] + arguments,
            executable: URL(fileURLWithPath: "/bin/bash"))
        let started = try shell.expect(name == "phone" ? .phoneStarted : .watchStarted).event
        let pid = try #require(started.int("pid"))
        #expect(shell.waitForExit(timeout: 5), "\(name) | head -n 1 still running 5 s after head exited")
        #expect(shell.exitStatus == 0, "stderr: \(shell.standardError)")
        #expect(kill(Int32(pid), 0) == -1 && errno == ESRCH, "\(name) (pid \(pid)) still exists")
    }

    @Test("Ctrl-D on a terminal stops the phone like quit: phone.stopping (end of input), exit 0")
    func endOfTerminalInput() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let terminal = try PseudoTerminal()
        let phone = try scenario.spawn(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone"],
            standardInput: terminal.terminal)
        try phone.expect(.phoneStarted)
        // VEOF (Ctrl-D) at the start of a line: read(2) on the terminal returns 0 (termios(3)).
        try terminal.controller.write(contentsOf: [0x04])
        try phone.expect(.phoneStopping) { $0.string("reason") == "end of input" }
        #expect(phone.waitForExit(timeout: Scenario.deadline))
        #expect(phone.exitStatus == 0)
    }

    @Test("End of file on a stdin that is not a terminal (< /dev/null) ends only the command reader")
    func endOfInputKeepsRunning() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.spawn(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone"],
            standardInput: FileHandle.nullDevice)
        try phone.expect(.phoneStarted)
        // Later work still happens: a watch connects, gets the batch, and its ACK is received.
        _ = try scenario.watch()
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        #expect(phone.isRunning)
        #expect(!phone.events.contains { $0.name == .phoneStopping })
        #expect(phone.stop(signal: SIGTERM, timeout: 5) == 0)
    }
}

extension LifecycleTests {
    @Test("SIGHUP ignored on entry (nohup) stays ignored: the phone keeps running and answers")
    func hangUpIgnoredOnEntry() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // `trap '' HUP` then exec: the phone starts with SIGHUP ignored, as under nohup(1).
        let script = #"trap '' HUP; exec "$0" "$@""#
        let arguments = ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone"]
        let phone = try scenario.spawn(
            "phone", ["-c", script, Scenario.executable("phone").path] + arguments,
            executable: URL(fileURLWithPath: "/bin/bash"))
        try phone.expect(.phoneStarted)
        // The kernel's view (proc(5) /proc/PID/status: SigIgn, SigCgt are hex masks, bit N-1 for
        // signal N): SIGHUP still ignored, SIGTERM caught.
        let status = try String(contentsOfFile: "/proc/\(phone.pid)/status", encoding: .utf8)
        func mask(_ field: String) throws -> UInt64 {
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
            return try #require(UInt64(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16))
        }
        #expect(try mask("SigIgn") & (1 << (SIGHUP - 1)) != 0, "SIGHUP not ignored:\n\(status)")
        #expect(try mask("SigCgt") & (1 << (SIGTERM - 1)) != 0, "SIGTERM not caught:\n\(status)")
        kill(phone.pid, SIGHUP)
        phone.send(line: "status")
        try phone.expect(.phoneStatus)
        #expect(!phone.events.contains { $0.name == .phoneStopping })
        #expect(phone.stop(signal: SIGTERM, timeout: 5) == 0)
    }
}

/// Tools that spawn phone and watch end them, on every way out, and remove their temp dir.
@Suite("children do not outlive their tool", .serialized)
struct ChildLifetimeTests {
    /// Starts `sleeptap-demo --raw` at 2 virtual hours a wall second (the story takes minutes;
    /// the first bed tap comes about 5 s in) and waits until phone and watch have started.
    /// - Returns: the demo, the pids of phone and watch (their `*.started` events), its temp dir.
    static func startDemo(_ scenario: Scenario) throws -> (demo: ChildProcess, pids: [Int32], dir: String) {
        let demo = try scenario.spawn("sleeptap-demo", ["--raw", "--speed", "7200"])
        let phone = try demo.expect(.phoneStarted).event
        let watch = try demo.expect(.watchStarted).event
        let pids = try [phone, watch].map { try #require($0.int("pid")).asProcessId }
        let endpoint = try #require(phone.string("endpoint"))
        let dir = URL(fileURLWithPath: String(endpoint.dropFirst("ipc://".count))).deletingLastPathComponent().path
        return (demo, pids, dir)
    }

    /// Whether `pid` is gone (or a zombie nobody reaped yet) within `timeout` seconds.
    static func isGone(_ pid: Int32, within timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if kill(pid, 0) == -1 && errno == ESRCH { return true }
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: close)...].first(where: { $0 != " " }) == "Z"
            {
                return true
            }
            usleep(10_000)  // no event tells a grandchild's end: poll /proc with a deadline
        }
        return false
    }

    @Test(
        "SIGTERM, SIGHUP or SIGINT to sleeptap-demo stops phone and watch and removes its temp dir",
        arguments: [SIGTERM, SIGHUP, SIGINT])
    func demoStoppedBySignal(_ signal: Int32) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let (demo, pids, dir) = try Self.startDemo(scenario)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        kill(demo.pid, signal)
        #expect(demo.waitForExit(timeout: 10))
        #expect(demo.exitStatus == 128 + signal, "stderr: \(demo.standardError)")
        for pid in pids { #expect(Self.isGone(pid, within: 5), "pid \(pid) still running") }
        #expect(!FileManager.default.fileExists(atPath: dir), "\(dir) left behind")
    }

    @Test("A closed stdout (`sleeptap-demo | head`) stops phone and watch, removes the temp dir, exit 0")
    func demoOutputClosed() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let (demo, pids, dir) = try Self.startDemo(scenario)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        demo.closeStandardOutput()
        // The next line (at the latest the first bed tap, ~5 s in) meets EPIPE; the story would
        // take minutes.
        #expect(demo.waitForExit(timeout: 15))
        #expect(demo.exitStatus == 0, "stderr: \(demo.standardError)")
        for pid in pids { #expect(Self.isGone(pid, within: 5), "pid \(pid) still running") }
        #expect(!FileManager.default.fileExists(atPath: dir), "\(dir) left behind")
    }

    @Test("SIGKILL of sleeptap-demo: phone and watch stop by themselves (parent-death signal)")
    func demoKilled() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let (demo, pids, dir) = try Self.startDemo(scenario)
        defer { try? FileManager.default.removeItem(atPath: dir) }  // nobody can clean up after SIGKILL
        kill(demo.pid, SIGKILL)
        #expect(demo.waitForExit(timeout: 5))
        for pid in pids { #expect(Self.isGone(pid, within: 5), "pid \(pid) still running") }
    }

    @Test("SIGKILL of a phone's parent stops the phone by its parent-death signal alone (stdout to a file)")
    func parentDeathSignal() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // bash starts the phone in the background with stdout to a file (no pipe whose reader
        // could vanish) and stdin from /dev/null, says its pid, and waits.
        let log = "\(scenario.dir)/phone.out"
        let script = #""$0" "$@" > "$LOG" 2>&1 & echo "{\"event\":\"spawned\",\"pid\":$!}"; wait"#
        let arguments = ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone"]
        let shell = try scenario.spawn(
            "bash", ["-c", script, Scenario.executable("phone").path] + arguments,
            executable: URL(fileURLWithPath: "/bin/bash"), environment: ["LOG": log])
        let pid = try #require(try shell.expect(rawName: "spawned").event.int("pid")).asProcessId
        // The parent-death signal is asked for at start-up, before phone.started.
        let deadline = Date().addingTimeInterval(Scenario.deadline)
        while !((try? String(contentsOfFile: log, encoding: .utf8))?.contains("\"phone.started\"") ?? false) {
            try #require(Date() < deadline, "no phone.started in \(log)")
            usleep(10_000)  // the event goes to a file: poll it with a deadline
        }
        kill(shell.pid, SIGKILL)
        #expect(Self.isGone(pid, within: 5), "the phone (pid \(pid)) outlived its parent")
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(output.contains(#""event":"phone.stopping""#) && output.contains(#""signal":15"#), "\(output)")
    }

    @Test("A child spawned from a thread that then exits keeps running (every spawn is on one long-lived thread)")
    func spawnerThreadOutlivesCaller() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let spawned = DispatchSemaphore(value: 0)
        let result = SpawnResult()
        let executable = try Scenario.executable("phone")
        let arguments = ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone"]
        Thread.detachNewThread {
            let outcome = Result { try ChildProcess(name: "phone", executable: executable, arguments: arguments) }
            // Exit only once the phone asked for its parent-death signal (before phone.started).
            _ = try? outcome.get().waitFor(.phoneStarted, timeout: Scenario.deadline)
            result.set(outcome, thread: Self.currentThreadId())
            spawned.signal()
        }
        #expect(spawned.wait(timeout: .now() + 10) == .success)
        let (outcome, threadId) = result.get()
        let phone = try #require(try outcome?.get())
        defer { phone.stop(signal: SIGKILL, timeout: 2) }
        let thread = try #require(threadId)
        try phone.expect(.phoneStarted)
        // Wait until that thread is gone (/proc/self/task/TID disappears, proc(5)).
        let deadline = Date().addingTimeInterval(Scenario.deadline)
        while FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)") {
            try #require(Date() < deadline, "the spawning thread did not exit")
            usleep(10_000)
        }
        // Still running and answering: no parent-death signal came with the thread's exit.
        phone.send(line: "status")
        try phone.expect(.phoneStatus)
        #expect(!phone.events.contains { $0.name == .phoneStopping })
    }

    /// This thread's kernel id, from the /proc/thread-self link ("PID/task/TID", proc(5)).
    static func currentThreadId() -> Int32? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))
            .flatMap { $0.split(separator: "/").last }.flatMap { Int32($0) }
    }

    @Test("A phone whose spawning process already exited (the race before prctl) stops at once, saying so")
    func parentAlreadyGone() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // A pid that no longer exists: a child that ran and was reaped.
        let gone = try scenario.spawn("true", [], executable: URL(fileURLWithPath: "/bin/true"))
        #expect(gone.waitForExit(timeout: 5))
        let arguments = ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone"]
        let phone = try scenario.spawn("phone", arguments, environment: ["SLEEPTAP_PARENT_PID": String(gone.pid)])
        #expect(phone.waitForExit(timeout: 5), "the phone kept running without its parent")
        #expect(phone.exitStatus == 0)
        phone.waitForOutputEnd(timeout: 5)
        #expect(
            phone.standardError.contains("SLEEPTAP_PARENT_PID=\(gone.pid)) has already exited"),
            "\(phone.standardError)")
        #expect(!phone.events.contains { $0.name == .phoneStarted })
    }
}

/// What the spawning thread of `spawnerThreadOutlivesCaller` hands back.
private final class SpawnResult: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<ChildProcess, any Error>?
    private var threadId: Int32?

    func set(_ outcome: Result<ChildProcess, any Error>, thread: Int32?) {
        lock.withLock {
            self.outcome = outcome
            threadId = thread
        }
    }

    func get() -> (Result<ChildProcess, any Error>?, Int32?) { lock.withLock { (outcome, threadId) } }
}

extension Int {
    /// This number as a pid_t.
    fileprivate var asProcessId: Int32 { Int32(truncatingIfNeeded: self) }
}

/// A pseudo-terminal pair (pty(7)): a child gets `terminal` as its stdin (isatty(3) is true), the
/// test types on `controller`.
struct PseudoTerminal {
    let controller: FileHandle
    let terminal: FileHandle

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        // posix_openpt(3), grantpt(3), unlockpt(3), ptsname_r(3): glibc has them, Swift's Glibc
        // module does not export them (they need _XOPEN_SOURCE), so look them up by name.
        let openpt: @convention(c) (Int32) -> Int32 = try Self.function("posix_openpt")
        let grant: @convention(c) (Int32) -> Int32 = try Self.function("grantpt")
        let unlock: @convention(c) (Int32) -> Int32 = try Self.function("unlockpt")
        let nameOf: @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32 = try Self.function("ptsname_r")
        let controllerFD = openpt(O_RDWR | O_NOCTTY)
        guard controllerFD >= 0 else { throw Failure(description: "posix_openpt: \(String(cString: strerror(errno)))") }
        controller = FileHandle(fileDescriptor: controllerFD, closeOnDealloc: true)
        var name = [CChar](repeating: 0, count: 128)
        guard grant(controllerFD) == 0, unlock(controllerFD) == 0, nameOf(controllerFD, &name, name.count) == 0 else {
            throw Failure(description: "grantpt/unlockpt/ptsname_r: \(String(cString: strerror(errno)))")
        }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let terminalFD = open(path, O_RDWR | O_NOCTTY)
        guard terminalFD >= 0 else { throw Failure(description: "open \(path): \(String(cString: strerror(errno)))") }
        terminal = FileHandle(fileDescriptor: terminalFD, closeOnDealloc: true)
    }

    private static func function<F>(_ name: String) throws -> F {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else { throw Failure(description: "no \(name) in libc") }
        return unsafeBitCast(symbol, to: F.self)
    }
}
