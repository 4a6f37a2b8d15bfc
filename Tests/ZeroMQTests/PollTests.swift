// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
import Testing
import ZeroMQ

/// SIGUSR1 deliveries seen by the test's handler.
private let signalsDelivered = Atomic<Int>(0)

@Suite("Poll")
struct PollTests {
    @Test("poll with nothing ready returns 0 after roughly the timeout")
    func pollTimeout() throws {
        try withContext { context in
            let dealer = try makeSocket(context, .dealer)
            defer { dealer.close() }
            var items = [PollItem.socket(dealer, events: .readable)]
            let clock = ContinuousClock()
            var ready = -1
            let elapsed = try clock.measure {
                ready = try ZeroMQ.poll(&items, timeoutMilliseconds: 100)
            }
            #expect(ready == 0)
            #expect(items[0].returnedEvents.isEmpty)
            #expect(milliseconds(elapsed) >= 95)
            #expect(milliseconds(elapsed) < 1_000)
        }
    }

    @Test("poll sees a file descriptor (a wake-up pipe) next to a socket")
    func pollFileDescriptor() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        try withContext { context in
            let dealer = try makeSocket(context, .dealer)
            defer { dealer.close() }
            var items = [
                PollItem.socket(dealer, events: .readable),
                PollItem.fileDescriptor(fds[0], events: .readable),
            ]
            #expect(try ZeroMQ.poll(&items, timeoutMilliseconds: 0) == 0)

            var byte: UInt8 = 1
            #expect(write(fds[1], &byte, 1) == 1)
            #expect(try ZeroMQ.poll(&items, timeoutMilliseconds: 2_000) == 1)
            #expect(items[0].returnedEvents.isEmpty)
            #expect(items[1].returnedEvents.contains(.readable))
        }
    }

    @Test("poll over a closed socket throws notSocket instead of polling a stray descriptor")
    func pollClosedSocket() throws {
        try withContext { context in
            let dealer = try makeSocket(context, .dealer)
            var items = [PollItem.socket(dealer, events: .readable)]
            dealer.close()
            #expect(throws: ZeroMQError.notSocket) {
                try ZeroMQ.poll(&items, timeoutMilliseconds: 0)
            }
        }
    }

    @Test("A signal during poll (EINTR) is retried with the remaining time, without throwing")
    func pollRetriesAfterSignal() throws {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            signalsDelivered.add(1, ordering: .relaxed)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // No SA_RESTART; libzmq returns EINTR either way.
        var previous = sigaction()
        #expect(sigaction(SIGUSR1, &action, &previous) == 0)
        defer { sigaction(SIGUSR1, &previous, nil) }

        // Test threads (libdispatch workers) block SIGUSR1, so poll on a thread of our own that
        // unblocks it. The socket is made, used and closed on that thread.
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let outcome = PollOutcome()
        let context = try Context()
        defer { context.terminate() }
        let before = signalsDelivered.load(ordering: .relaxed)
        Thread.detachNewThread {
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            defer { finished.signal() }
            do {
                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                var items = [PollItem.socket(dealer, events: .readable)]
                outcome.thread.withLock { $0 = pthread_self() }
                started.signal()
                let clock = ContinuousClock()
                var ready = -1
                let elapsed = try clock.measure {
                    ready = try ZeroMQ.poll(&items, timeoutMilliseconds: 500)
                }
                outcome.result.withLock { $0 = .success((ready, elapsed)) }
            } catch {
                started.signal()
                outcome.result.withLock { $0 = .failure(error) }
            }
        }
        started.wait()
        if let target = outcome.thread.withLock({ $0 }) {
            // Several signals spread over the 500 ms poll; the thread lives until it returns.
            for _ in 0..<3 {
                usleep(100_000)
                pthread_kill(target, SIGUSR1)
            }
        }
        finished.wait()

        let (ready, elapsed) = try #require(try outcome.result.withLock { $0 }?.get())
        #expect(ready == 0)
        #expect(signalsDelivered.load(ordering: .relaxed) - before >= 1)
        #expect(milliseconds(elapsed) >= 495)
        // Restarting the full 500 ms after the last signal (~300 ms in) would take >= 800 ms.
        #expect(milliseconds(elapsed) < 780)
    }
}

/// What the polling thread of `pollRetriesAfterSignal` reports.
private final class PollOutcome: Sendable {
    let thread = Mutex<pthread_t?>(nil)
    let result = Mutex<Result<(Int, Duration), any Error>?>(nil)
}
