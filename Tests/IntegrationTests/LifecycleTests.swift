import Foundation
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
        let started = try shell.expect("\(name).started").event
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
        try phone.expect("phone.started")
        // VEOF (Ctrl-D) at the start of a line: read(2) on the terminal returns 0 (termios(3)).
        try terminal.controller.write(contentsOf: [0x04])
        try phone.expect("phone.stopping") { $0.string("reason") == "end of input" }
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
        try phone.expect("phone.started")
        // Later work still happens: a watch connects, gets the batch, and its ACK is received.
        _ = try scenario.watch()
        try phone.expect("ack.received") { $0.int("seq") == 1 }
        #expect(phone.isRunning)
        #expect(!phone.events.contains { $0.name == "phone.stopping" })
        #expect(phone.stop(signal: SIGTERM, timeout: 5) == 0)
    }
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
