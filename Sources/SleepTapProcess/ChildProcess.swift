// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// One JSON Lines event read from a child's stdout.
package struct ChildEvent: @unchecked Sendable, CustomStringConvertible {
    /// The `event` field as printed.
    package let rawName: String
    /// The whole decoded object (`event`, `time`, `source` and the fields).
    package let fields: [String: Any]
    /// The line as printed.
    package let line: String

    /// The `event` field from the catalogue; nil for a name the catalogue lacks (a tool's own
    /// events, such as the Python interop client's).
    package var name: EventName? { EventName(rawValue: rawName) }
    /// The `source` field (`phone`, `watch`, `os`), or nil.
    package var source: EventSource? { string("source").flatMap(EventSource.init(rawValue:)) }
    /// A string field, or nil.
    package func string(_ key: String) -> String? { fields[key] as? String }
    /// An integer field, or nil.
    package func int(_ key: String) -> Int? { (fields[key] as? NSNumber)?.intValue }
    /// A nested object field (e.g. `phone.status`'s `os`), or nil.
    package func object(_ key: String) -> [String: Any]? { fields[key] as? [String: Any] }
    /// The `time` field parsed as an instant (with its milliseconds).
    package var time: Date? { string("time").flatMap(ISO8601.date) }
    package var description: String { line }
}

/// One line a child wrote on stdout, with the wall instant it was read.
package struct ChildOutputLine: Sendable {
    /// When the reader thread read the line.
    package let arrived: Date
    /// The line, without its newline.
    package let text: String
}

/// A spawned SleepTap executable whose stdout is read as JSON Lines on a background thread.
///
/// Used by `sleeptap-demo`, `sleeptap-soak` and the integration tests, for every process they
/// start. Spawns with Foundation's `Process` (posix_spawn: no fork of a process that holds a
/// ZeroMQ context), reads both pipes before waiting, and never blocks in `deinit`: call `stop()`.
///
/// Children do not outlive the spawning process. Each one is registered with `Reaper.shared`,
/// which ends it by pid on every exit path of a tool that uses it (signals, a closed stdout,
/// normal and error exits). And each one gets `SLEEPTAP_PARENT_PID` (this process's pid): phone
/// and watch then ask the kernel for SIGTERM when their parent dies (prctl(2) PR_SET_PDEATHSIG),
/// which covers SIGKILL of this process too. That signal comes when the parent THREAD that
/// spawned the child exits, not the process, so every child is spawned from one thread that
/// lives as long as the process (`Spawner`), never from a worker thread that may be retired.
package final class ChildProcess: @unchecked Sendable {
    /// A label for messages ("phone", "watch").
    package let name: String
    private let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let condition = NSCondition()
    private var eventList: [ChildEvent] = []
    private var nonEventLines: [String] = []
    private var outputList: [ChildOutputLine] = []
    private var stderrData = Data()
    private var stdoutClosed = false
    private var stderrClosed = false
    /// Called on the reader thread for each event, in order (optional live display).
    private let onEvent: (@Sendable (ChildEvent) -> Void)?

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - standardInput: the child's stdin (e.g. `FileHandle.nullDevice`, a terminal); nil for a
    ///     pipe that `send(line:)` writes to.
    /// - Throws: if the executable cannot be started.
    package init(
        name: String, executable: URL, arguments: [String], standardInput: FileHandle? = nil,
        onEvent: (@Sendable (ChildEvent) -> Void)? = nil
    ) throws {
        self.name = name
        self.onEvent = onEvent
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment[Self.parentVariable] = String(getpid())
        process.environment = environment
        process.standardInput = standardInput ?? stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        var cancel: [Int32] = [0, 0]
        guard pipe(&cancel) == 0 else { throw CocoaError(.fileWriteUnknown) }
        for fd in cancel { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        cancelRead = cancel[0]
        cancelWrite = cancel[1]
        let process = process
        do {
            try Spawner.shared.run { try process.run() }
        } catch {
            close(cancel[0])
            close(cancel[1])
            throw error
        }
        Reaper.shared.track(self)
        let out = stdoutPipe.fileHandleForReading.fileDescriptor
        let err = stderrPipe.fileHandleForReading.fileDescriptor
        Thread.detachNewThread { [self] in readLines(from: out) }
        Thread.detachNewThread { [self] in readErrors(from: err) }
    }

    deinit {
        close(cancelRead)
        close(cancelWrite)
    }

    /// The environment variable that tells phone and watch which process spawned them.
    static let parentVariable = "SLEEPTAP_PARENT_PID"
    /// Read end of the pipe that tells the stdout reader to stop (`closeStandardOutput()`).
    private let cancelRead: Int32
    private let cancelWrite: Int32

    /// Stops reading the child's stdout and closes this end of the pipe, as `| head` does when it
    /// has read enough: the child's next write fails with EPIPE (or SIGPIPE kills it). Events
    /// read before stay in `events`.
    package func closeStandardOutput() {
        var byte: UInt8 = 1
        _ = write(cancelWrite, &byte, 1)
    }

    /// The child's process id.
    package var pid: Int32 { process.processIdentifier }
    /// Whether the child is still running.
    package var isRunning: Bool { process.isRunning }

    /// Every event read so far, in order.
    package var events: [ChildEvent] {
        condition.lock()
        defer { condition.unlock() }
        return eventList
    }

    /// What the child wrote on stderr so far.
    package var standardError: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stderrData, as: UTF8.self)
    }

    /// The lines the child wrote on stdout that are not JSON events (usage, version), in order.
    package var otherOutputLines: [String] {
        condition.lock()
        defer { condition.unlock() }
        return nonEventLines
    }

    /// Every line the child wrote on stdout so far, events and other lines, in order, each with
    /// the wall instant it was read (for help texts, reports, and pacing).
    package var outputLines: [ChildOutputLine] {
        condition.lock()
        defer { condition.unlock() }
        return outputList
    }

    /// Writes one line (a newline is added) to the child's stdin (when it is the pipe).
    package func send(line: String) {
        try? stdinPipe.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes the child's stdin (when it is the pipe): it reads end of file.
    package func closeStandardInput() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    /// Waits until an event named `name` matching `predicate` appears at index ≥ `from`.
    ///
    /// - Parameters:
    ///   - name: the `event` field.
    ///   - from: first index of `events` to consider.
    ///   - timeout: wall seconds to wait at most.
    ///   - predicate: extra condition on the event.
    /// - Returns: the event and its index, or nil at the deadline or when stdout closed first.
    package func waitFor(
        _ name: EventName, from: Int = 0, timeout: TimeInterval,
        where predicate: (ChildEvent) -> Bool = { _ in true }
    ) -> (event: ChildEvent, index: Int)? {
        waitFor(rawNames: [name.rawValue], from: from, timeout: timeout, where: predicate)
    }

    /// Waits for the first event whose name is one of `names` (and matches `predicate`).
    package func waitFor(
        anyOf names: Set<EventName>, from: Int = 0, timeout: TimeInterval,
        where predicate: (ChildEvent) -> Bool = { _ in true }
    ) -> (event: ChildEvent, index: Int)? {
        waitFor(rawNames: Set(names.map(\.rawValue)), from: from, timeout: timeout, where: predicate)
    }

    /// Waits for the first event whose `event` field, as printed, is one of `rawNames`: for
    /// names outside the catalogue (a tool's own events).
    package func waitFor(
        rawNames names: Set<String>, from: Int = 0, timeout: TimeInterval,
        where predicate: (ChildEvent) -> Bool = { _ in true }
    ) -> (event: ChildEvent, index: Int)? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        var scanned = max(0, from)
        while true {
            while scanned < eventList.count {
                let event = eventList[scanned]
                if names.contains(event.rawName) && predicate(event) { return (event, scanned) }
                scanned += 1
            }
            if stdoutClosed { return nil }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// Waits until a line of stdout (an event or any other line) matches `predicate`: for tools
    /// that print text rather than events.
    ///
    /// - Parameters:
    ///   - timeout: wall seconds to wait at most.
    ///   - predicate: the condition on the line's text.
    /// - Returns: the line, or nil at the deadline or when stdout closed first.
    package func waitForLine(timeout: TimeInterval, where predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        var scanned = 0
        while true {
            while scanned < outputList.count {
                if predicate(outputList[scanned].text) { return outputList[scanned].text }
                scanned += 1
            }
            if stdoutClosed { return nil }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// Waits until what the child wrote on stderr so far contains `text`: stderr is read on its
    /// own thread, so a line written before a stdout event may not be read when the event is.
    /// - Parameter timeout: wall seconds to wait at most.
    /// - Returns: false at the deadline, or when stderr closed without it.
    @discardableResult
    package func waitForStandardError(containing text: String, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !String(decoding: stderrData, as: UTF8.self).contains(text) {
            if stderrClosed || !condition.wait(until: deadline) { return false }
        }
        return true
    }

    /// Sends `signal` and waits up to `timeout` seconds for the exit; SIGKILL after that.
    /// - Returns: the exit status (or 128 + signal when killed by one). Idempotent.
    @discardableResult
    package func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 3) -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, signal)
            if !waitForExit(timeout: timeout) {
                kill(process.processIdentifier, SIGKILL)
                _ = waitForExit(timeout: 5)
            }
        }
        return exitStatus ?? -1
    }

    /// Waits for the child to exit by itself. - Returns: false at the deadline.
    package func waitForExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() >= deadline { return false }
            usleep(5_000)  // Process has no timed wait; 5 ms polling of the exit status only.
        }
        return true
    }

    /// Exit status once exited: the code, or 128 + signal when ended by a signal.
    package var exitStatus: Int32? {
        guard !process.isRunning else { return nil }
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Reads `fd` until end of file (or, for stdout, `closeStandardOutput()`).
    /// - Returns: false when reading stopped on request.
    private func readChunks(from fd: Int32, cancellable: Bool, _ chunk: (ArraySlice<UInt8>) -> Void) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var items = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            if cancellable { items.append(pollfd(fd: cancelRead, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&items, nfds_t(items.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return true
            }
            if cancellable && items[1].revents != 0 { return false }
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return true }
            chunk(buffer[0..<count])
        }
    }

    private func readLines(from fd: Int32) {
        var buffer = Data()
        let complete = readChunks(from: fd, cancellable: true) { chunk in
            buffer.append(contentsOf: chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let lineData = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                record(String(decoding: lineData, as: UTF8.self))
            }
        }
        if complete && !buffer.isEmpty { record(String(decoding: buffer, as: UTF8.self)) }
        // Closing the only read end makes the child's next write fail (EPIPE).
        try? stdoutPipe.fileHandleForReading.close()
        condition.lock()
        stdoutClosed = true
        condition.broadcast()
        condition.unlock()
    }

    private func record(_ line: String) {
        let output = ChildOutputLine(arrived: Date(), text: line)
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let name = object["event"] as? String
        else {
            condition.lock()
            nonEventLines.append(line)
            outputList.append(output)
            condition.broadcast()
            condition.unlock()
            return
        }
        let event = ChildEvent(rawName: name, fields: object, line: line)
        onEvent?(event)
        condition.lock()
        outputList.append(output)
        eventList.append(event)
        condition.broadcast()
        condition.unlock()
    }

    private func readErrors(from fd: Int32) {
        _ = readChunks(from: fd, cancellable: false) { chunk in
            condition.lock()
            stderrData.append(contentsOf: chunk)
            condition.broadcast()
            condition.unlock()
        }
        try? stderrPipe.fileHandleForReading.close()
        condition.lock()
        stderrClosed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until both stdout and stderr reached end of file (the child exited and every byte
    /// it wrote has been read). - Returns: false at the deadline.
    @discardableResult
    package func waitForOutputEnd(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !(stdoutClosed && stderrClosed) {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    /// The directory holding the running executable (where SwiftPM puts every product, and where
    /// `scripts/install.sh` puts them under `PREFIX/libexec/sleeptap`). On Linux it is read from
    /// /proc/self/exe (proc(5)), which holds the resolved path also when the tool was started
    /// through PATH or a symbolic link (`sleeptap-demo`); elsewhere from `argv[0]`.
    package static var productsDirectory: URL {
        #if os(Linux)
            if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                return URL(fileURLWithPath: path).deletingLastPathComponent()
            }
        #endif
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// Finds a built SleepTap executable: next to the running binary, else in `.build/debug` or
    /// `.build/release` below the working directory.
    package static func locate(_ executable: String) -> URL? {
        var candidates = [productsDirectory]
        #if os(Linux)
            // `swift test` runs Tests from <build>/debug/<Package>PackageTests.xctest.
            candidates.append(productsDirectory.deletingLastPathComponent())
        #endif
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        candidates += [cwd.appendingPathComponent(".build/debug"), cwd.appendingPathComponent(".build/release")]
        for directory in candidates {
            let url = directory.appendingPathComponent(executable)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }
}

/// The one thread that spawns every child, for the life of the process: the parent-death signal
/// of a child (prctl(2) PR_SET_PDEATHSIG) fires when the thread that spawned it exits, and
/// posix_spawn runs on the calling thread.
final class Spawner: @unchecked Sendable {
    static let shared = Spawner()
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "sleeptap-spawner"
        thread.start()
    }

    /// Runs `body` on the spawner thread and waits for it.
    /// - Throws: what `body` throws.
    func run(_ body: @escaping () throws -> Void) throws {
        let done = NSCondition()
        var finished = false
        var failure: (any Error)?
        condition.lock()
        jobs.append {
            do { try body() } catch { failure = error }
            done.lock()
            finished = true
            done.signal()
            done.unlock()
        }
        condition.signal()
        condition.unlock()
        done.lock()
        while !finished { done.wait() }
        done.unlock()
        if let failure { throw failure }
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
