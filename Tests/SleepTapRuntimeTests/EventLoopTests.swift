// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SleepTapRuntime

/// The poll loop's order: a timer that is due fires before the inputs read after it was due.
@Suite("Poll loop")
struct EventLoopTests {
    @Test("A timer due when the loop wakes fires before a stdin line read in the same turn")
    func dueTimerBeforeLine() throws {
        let mailbox = try Mailbox()
        let loop = EventLoop<String>(sockets: [], mailbox: mailbox)
        var order: [String] = []
        loop.arm("bed", after: 0)
        mailbox.post(.line("open"))
        try loop.run(
            readable: { _ in },
            input: { item in
                if case .line(let line) = item { order.append(line) }
                loop.stop()
            },
            timer: { order.append($0) })
        #expect(order == ["bed", "open"])
    }

    @Test("A timer that falls due while one line is handled fires before the next line; a cancelled one does not")
    func timerDueBetweenLines() throws {
        let mailbox = try Mailbox()
        let loop = EventLoop<String>(sockets: [], mailbox: mailbox)
        var order: [String] = []
        mailbox.post(.line("first"))
        mailbox.post(.line("second"))
        try loop.run(
            readable: { _ in },
            input: { item in
                guard case .line(let line) = item else { return }
                order.append(line)
                if line == "first" {
                    loop.arm("launch", after: 0)
                    loop.arm("relink", after: 0)
                } else {
                    loop.stop()
                }
            },
            timer: { name in
                order.append(name)
                // The first of the two cancels the other: it must not fire.
                loop.cancel(name == "launch" ? "relink" : "launch")
            })
        #expect(order == ["first", "launch", "second"] || order == ["first", "relink", "second"], "\(order)")
    }

    @Test(
        "A timer that a firing timer arms already due (the phone's next OS launch, planned when a slow step ended) fires before the next line"
    )
    func timerArmedDueByATimerBeforeNextLine() throws {
        let mailbox = try Mailbox()
        let loop = EventLoop<String>(sockets: [], mailbox: mailbox)
        var order: [String] = []
        mailbox.post(.line("first"))
        mailbox.post(.line("second"))
        try loop.run(
            readable: { _ in },
            input: { item in
                guard case .line(let line) = item else { return }
                order.append(line)
                if line == "first" { loop.arm("launch", after: 0) } else { loop.stop() }
            },
            timer: { name in
                order.append(name)
                if name == "launch" { loop.arm("next launch", at: Date().addingTimeInterval(-1)) }
            })
        #expect(order == ["first", "launch", "next launch", "second"], "\(order)")
    }

    @Test("A timer that re-arms itself already due cannot starve input: the line comes within a few passes")
    func selfRearmingTimerDoesNotStarveInput() throws {
        let mailbox = try Mailbox()
        let loop = EventLoop<String>(sockets: [], mailbox: mailbox)
        var fired = 0
        var line: String?
        loop.arm("spin", after: 0)
        mailbox.post(.line("open"))
        try loop.run(
            readable: { _ in },
            input: { item in
                if case .line(let text) = item { line = text }
                loop.stop()
            },
            timer: { name in
                fired += 1
                loop.arm(name, after: 0)
            })
        #expect(line == "open")
        #expect(fired <= 3 * EventLoop<String>.maximumPasses, "\(fired) firings before the line")
    }
}
