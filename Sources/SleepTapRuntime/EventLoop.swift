import Foundation
import ZeroMQ

/// The single-threaded poll loop both executables run: it owns the sockets, waits in `zmq_poll`
/// on them, on the mailbox pipe and on the error condition of the event output (a pipe whose
/// reader went away), and fires named wall-clock timers. Never busy-polls: the poll timeout is
/// the time to the nearest timer (capped at 1 s).
///
/// Thread-safety: create, use and drop on one thread (the sockets' owner).
final class EventLoop {
    /// Named timers; values are wall instants.
    private var timers: [String: Date] = [:]
    private let mailbox: Mailbox
    private let sockets: [Socket]
    private let output: EventOutput?
    /// The output's descriptor while it may still report its reader gone.
    private var outputDescriptor: Int32?
    private(set) var stopping = false

    /// - Parameters:
    ///   - sockets: polled for input, in this order (`readable` gets the index).
    ///   - mailbox: polled for stdin lines and signals.
    ///   - output: the event output; when its reader goes away it is marked closed (which posts
    ///     a stop through its `whenClosed` action).
    init(sockets: [Socket], mailbox: Mailbox, output: EventOutput? = nil) {
        self.sockets = sockets
        self.mailbox = mailbox
        self.output = output
        outputDescriptor = output?.pollableDescriptor
    }

    func arm(_ name: String, at wall: Date) { timers[name] = wall }
    func arm(_ name: String, after seconds: TimeInterval) { timers[name] = Date().addingTimeInterval(seconds) }
    func cancel(_ name: String) { timers[name] = nil }
    func isArmed(_ name: String) -> Bool { timers[name] != nil }
    func stop() { stopping = true }

    /// Runs until `stop()`.
    /// - Parameters:
    ///   - readable: called with the index of a socket that has input.
    ///   - input: called for each mailbox item.
    ///   - timer: called with the name of a due timer (already disarmed).
    /// - Throws: a `ZeroMQError` from `zmq_poll` other than EINTR (which is retried).
    func run(
        readable: (Int) -> Void, input: (LoopInput) -> Void, timer: (String) -> Void
    ) throws {
        while !stopping {
            var items = sockets.map { PollItem.socket($0, events: .readable) }
            items.append(.fileDescriptor(mailbox.readFD, events: .readable))
            if let outputDescriptor {
                // No condition asked for: poll(2) reports POLLERR and POLLHUP regardless.
                items.append(.fileDescriptor(outputDescriptor, events: []))
            }
            let now = Date()
            var timeout = 1000
            if let next = timers.values.min() {
                timeout = max(0, min(timeout, Int((next.timeIntervalSince(now) * 1000).rounded(.up))))
            }
            _ = try poll(&items, timeoutMilliseconds: timeout)
            for index in sockets.indices where items[index].returnedEvents.contains(.readable) {
                readable(index)
                if stopping { return }
            }
            if items[sockets.count].returnedEvents.contains(.readable) {
                for item in mailbox.drain() {
                    input(item)
                    if stopping { return }
                }
            }
            if outputDescriptor != nil, !items[sockets.count + 1].returnedEvents.isEmpty {
                outputDescriptor = nil  // reported once; polling it again would return at once
                output?.noteClosed()
            }
            let due = Date()
            for (name, at) in timers.sorted(by: { $0.value < $1.value }) where at <= due {
                timers[name] = nil
                timer(name)
                if stopping { return }
            }
        }
    }
}
