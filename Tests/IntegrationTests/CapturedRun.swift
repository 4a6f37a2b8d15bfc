import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An executable run to its end with every stdout line kept, JSON or not, and the wall instant
/// each line arrived (for help texts, reports and pacing). `ChildProcess` keeps only the events.
struct CapturedRun {
    var status: Int32
    var lines: [(at: Date, text: String)]
    var standardError: String

    var standardOutput: String { lines.map(\.text).joined(separator: "\n") }

    /// Runs `name` (a built product) with `arguments` and stdin at end of file.
    ///
    /// Both pipes are read on their own threads while the child runs. At `timeout` the child gets
    /// SIGTERM (the demo and the soak clean up their children on it), then SIGKILL, and an issue is
    /// recorded.
    /// - Throws: when the executable is not built or cannot be started.
    static func run(
        _ name: String, _ arguments: [String], timeout: TimeInterval,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CapturedRun {
        let process = Process()
        process.executableURL = try Scenario.executable(name)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let collector = LineCollector()
        try process.run()
        let out = output.fileHandleForReading
        let err = errors.fileHandleForReading
        Thread.detachNewThread { collector.readLines(out) }
        Thread.detachNewThread { collector.readErrors(err) }
        if !collector.waitForEnd(timeout: timeout) {
            Issue.record("\(name) \(arguments) did not finish within \(timeout) s", sourceLocation: sourceLocation)
            kill(process.processIdentifier, SIGTERM)
            if !collector.waitForEnd(timeout: 10) { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        _ = collector.waitForEnd(timeout: 5)
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return CapturedRun(status: status, lines: collector.lines, standardError: collector.errors)
    }
}

/// Reads a child's stdout as timestamped lines and its stderr as text, until both reach end of file.
private final class LineCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private var collected: [(at: Date, text: String)] = []
    private var errorData = Data()
    private var open = 2

    var lines: [(at: Date, text: String)] {
        condition.lock()
        defer { condition.unlock() }
        return collected
    }

    var errors: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: errorData, as: UTF8.self)
    }

    func readLines(_ handle: FileHandle) {
        var buffer = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            let now = Date()
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                condition.lock()
                collected.append((now, text))
                condition.unlock()
            }
        }
        condition.lock()
        if !buffer.isEmpty { collected.append((Date(), String(decoding: buffer, as: UTF8.self))) }
        open -= 1
        condition.broadcast()
        condition.unlock()
    }

    func readErrors(_ handle: FileHandle) {
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            condition.lock()
            errorData.append(chunk)
            condition.unlock()
        }
        condition.lock()
        open -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until both pipes reached end of file. - Returns: false at the deadline.
    func waitForEnd(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while open > 0 {
            if !condition.wait(until: deadline) { return open == 0 }
        }
        return true
    }
}
