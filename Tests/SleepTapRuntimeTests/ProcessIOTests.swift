// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

@Suite("stdin end of file, closed stdout")
struct ProcessIOTests {
    @Test("End of file on a terminal (Ctrl-D) stops the process; anywhere else only the command reader ends")
    func endOfFileDecision() {
        #expect(StandardInputReader.endOfFile(onTerminal: true) == .stop(.endOfTerminalInput))
        #expect(StandardInputReader.endOfFile(onTerminal: false) == .endOfInput)
    }

    @Test("The stopping event names the signal, or the reason (end of input, output closed)")
    func stoppingFields() {
        func rendered(_ cause: StopCause) -> String {
            Event(.phoneStopping, cause.eventFields).jsonLine(time: Date(timeIntervalSince1970: 0), process: .phone)
        }
        #expect(rendered(.signal(SIGHUP)).hasSuffix(#","signal":1}"#))
        #expect(rendered(.endOfTerminalInput).hasSuffix(#","reason":"end of input"}"#))
        #expect(rendered(.outputClosed).hasSuffix(#","reason":"output closed"}"#))
    }

    @Test("A write to a pipe whose reader is gone (EPIPE) marks the output closed and runs the stop action once")
    func brokenPipe() throws {
        // As in phone and watch: SIGPIPE ignored, so the write fails with EPIPE instead of killing.
        signal(SIGPIPE, SIG_IGN)
        let pipe = Pipe()
        let output = EventOutput(handle: pipe.fileHandleForWriting, clock: WallClock(), process: .phone)
        let stops = Counter()
        output.whenClosed { stops.increment() }
        output.emit(Event(.phoneStarted))
        let line = pipe.fileHandleForReading.availableData
        #expect(String(decoding: line, as: UTF8.self).hasPrefix(#"{"event":"phone.started""#))
        #expect(!output.isClosed && stops.value == 0)
        try pipe.fileHandleForReading.close()
        output.emit(Event(.phoneStatus))
        #expect(output.isClosed)
        output.emit(Event(.phoneStopping))
        #expect(stops.value == 1)
        // An action registered after the fact runs at once.
        output.whenClosed { stops.increment() }
        #expect(stops.value == 2)
    }

    @Test("Only a pipe or a socket is polled for its reader going away, not a file or a terminal")
    func pollableOutput() throws {
        let pipe = Pipe()
        #expect(
            EventOutput(handle: pipe.fileHandleForWriting, clock: WallClock(), process: .phone).pollableDescriptor
                != nil)
        let null = try #require(FileHandle(forWritingAtPath: "/dev/null"))
        #expect(EventOutput(handle: null, clock: WallClock(), process: .phone).pollableDescriptor == nil)
    }
}

/// A thread-safe count.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
