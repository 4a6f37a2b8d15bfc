// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A temp dir for one test (short path: ipc paths must stay under 107 bytes), with the phone and
/// watch it spawned. `close()` stops every child and removes the dir; call it in a `defer`.
final class Scenario {
    let dir: String
    private(set) var children: [ChildProcess] = []
    /// Wall seconds to wait for an expected event before failing.
    static let deadline: TimeInterval = 20

    init() throws {
        // SIGINT, SIGTERM or SIGHUP to the test process stop every child and remove every
        // scenario's dir; a SIGKILL leaves the children to their parent-death signal.
        Reaper.shared.installSignalHandlers(program: "SleepTapPackageTests")
        dir = try Reaper.shared.makeTemporaryDirectory(prefix: "sleeptap-it")
    }

    var endpoint: String { "ipc://\(dir)/phone.sock" }

    static func executable(_ name: String) throws -> URL {
        try #require(ChildProcess.locate(name), "\(name) not built; run `swift build` first")
    }

    /// Starts `phone` with `--endpoint`/`--state-dir` filled in, plus `extra`.
    func phone(_ extra: [String] = [], stateDir: String = "phone") throws -> ChildProcess {
        try spawn("phone", ["--endpoint", endpoint, "--state-dir", "\(dir)/\(stateDir)"] + extra)
    }

    /// Starts `watch` with `--endpoint` (the scenario's unless given) and `--state-dir` filled in,
    /// plus `extra`.
    func watch(_ extra: [String] = [], stateDir: String = "watch", endpoint: String? = nil) throws -> ChildProcess {
        try spawn("watch", ["--endpoint", endpoint ?? self.endpoint, "--state-dir", "\(dir)/\(stateDir)"] + extra)
    }

    /// Starts the built executable `name`, or `executable` when given (labelled `name`);
    /// `environment` adds to (or overrides) the inherited variables, e.g. `["TZ": "UTC"]` (through env(1));
    /// `standardInput` replaces the stdin pipe (e.g. `FileHandle.nullDevice`, a terminal).
    func spawn(
        _ name: String, _ arguments: [String], executable: URL? = nil, environment: [String: String] = [:],
        standardInput: FileHandle? = nil
    ) throws -> ChildProcess {
        let executable = try executable ?? Self.executable(name)
        let child =
            environment.isEmpty
            ? try ChildProcess(name: name, executable: executable, arguments: arguments, standardInput: standardInput)
            : try ChildProcess(
                name: name, executable: URL(fileURLWithPath: "/usr/bin/env"),
                arguments: environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [executable.path]
                    + arguments, standardInput: standardInput)
        children.append(child)
        return child
    }

    /// Runs an executable to completion (for argument and input errors).
    /// - Returns: exit status and stderr.
    func runToExit(_ name: String, _ arguments: [String], timeout: TimeInterval = 10) throws -> (
        status: Int32, stderr: String
    ) {
        let child = try spawn(name, arguments)
        guard child.waitForExit(timeout: timeout) else {
            child.stop(signal: SIGKILL)
            Issue.record("\(name) \(arguments) did not exit within \(timeout) s")
            return (-1, child.standardError)
        }
        // stdout and stderr are read on other threads: wait until both reached end of file.
        child.waitForOutputEnd(timeout: 5)
        return (child.exitStatus ?? -1, child.standardError)
    }

    func close() {
        for child in children { child.stop(signal: SIGKILL, timeout: 2) }
        for child in children where ["phone", "watch"].contains(child.name) {
            Self.checkLines(of: child)
        }
        try? FileManager.default.removeItem(atPath: dir)
        Reaper.shared.forget(directory: dir)
    }
}

extension Scenario {
    /// Every line phone and watch wrote is an event of the catalogue with a `source` and a `time`
    /// to the millisecond (docs/protocol.md, "Events").
    static func checkLines(of child: ChildProcess) {
        for event in child.events {
            let time = event.string("time") ?? ""
            let millisecondForm = time.utf8.count == 24 && time.hasSuffix("Z") && event.time != nil
            if event.name == nil || event.source == nil || !millisecondForm {
                Issue.record("\(child.name) wrote a line off the event format: \(event.line)")
                return
            }
        }
    }
}

extension ChildProcess {
    /// `waitFor` with the scenario deadline, recording an issue (with stderr) when it times out.
    @discardableResult
    func expect(
        _ name: EventName, from: Int = 0, where predicate: (ChildEvent) -> Bool = { _ in true },
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (event: ChildEvent, index: Int) {
        try expect(rawName: name.rawValue, from: from, where: predicate, sourceLocation: sourceLocation)
    }

    /// `expect` for an event name outside the catalogue (a tool's own events, as printed).
    @discardableResult
    func expect(
        rawName name: String, from: Int = 0, where predicate: (ChildEvent) -> Bool = { _ in true },
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (event: ChildEvent, index: Int) {
        guard let found = waitFor(rawNames: [name], from: from, timeout: Scenario.deadline, where: predicate) else {
            let seen = events.suffix(8).map(\.line).joined(separator: "\n")
            Issue.record(
                "no \(name) from \(self.name) within \(Scenario.deadline) s; last events:\n\(seen)\nstderr:\n\(standardError)",
                sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return found
    }
}
