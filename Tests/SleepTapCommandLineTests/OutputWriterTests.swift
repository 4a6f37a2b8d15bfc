// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one write loop of every executable's output.
@Suite("Output writer")
struct OutputWriterTests {
    @Test("A full device fails with its errno (ENOSPC), a closed descriptor with EBADF")
    func failures() throws {
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        #expect(OutputWriter.writeLine("x", to: full) == .failed(errno: ENOSPC))
        close(full)
        #expect(OutputWriter.writeLine("x", to: full) == .failed(errno: EBADF))
    }

    @Test("A non-blocking pipe that fills up (EAGAIN) is waited on, and every byte arrives in order")
    func nonBlockingPipe() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (reader, writer) = (ends[0], ends[1])
        try #require(fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK) == 0)
        // Sixteen times a pipe's default capacity (64 KiB, pipe(7)), so the writer must wait.
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let received = Received()
        let done = DispatchSemaphore(value: 0)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = read(reader, &buffer, buffer.count)
                if count <= 0 { break }
                received.data.append(contentsOf: buffer[0..<count])
                usleep(100)
            }
            done.signal()
        }.start()
        #expect(OutputWriter.write(bytes, to: writer) == .written)
        close(writer)
        #expect(done.wait(timeout: .now() + 30) == .success)
        close(reader)
        #expect(received.data == Data(bytes))  // read after the semaphore: the thread is done
    }
}

/// What the reader thread read; the test reads it only after the thread signalled it is done.
private final class Received: @unchecked Sendable {
    var data = Data()
}
