// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapOS
import SleepTapProcess
import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-soak: a seeded fault matrix over ipc. Real `phone` and `watch` processes; each step
// injects one fault chosen by SplitMix64, waits (with a deadline) until the system is quiet, then
// checks that the link lost nothing: the watch holds the newest batch, no batch was applied twice,
// never older over newer, and the phone never issued a seq twice.

/// Writes a line to stdout at once. When nobody reads any more (EPIPE) the soak stops its
/// children, removes its temp dir and exits 0 (`Reaper`).
func out(_ line: String) {
    Reaper.shared.writeLine(line)
}

/// Writes a line to stderr at once.
func complain(_ line: String) {
    Reaper.shared.writeError(line)
}

// MARK: - the kill switch

/// Sends SIGKILL to a process from a child's reader thread the moment a matching event is read,
/// so the kill lands as close as possible after that event (e.g. after batch.sent, before the
/// ACK comes back; after batch.applied, before ack.sent).
final class Tripwire: @unchecked Sendable {
    private let condition = NSCondition()
    private var target: Int32 = 0
    private var matches: (@Sendable (ChildEvent) -> Bool)?
    private var firedBy: ChildEvent?

    /// Kills `target` at the first event of the watched child for which `when` holds.
    func arm(target pid: Int32, when predicate: @escaping @Sendable (ChildEvent) -> Bool) {
        condition.lock()
        target = pid
        matches = predicate
        firedBy = nil
        condition.unlock()
    }

    /// Called on the watched child's reader thread for each event, before it is recorded.
    func observe(_ event: ChildEvent) {
        condition.lock()
        defer { condition.unlock() }
        guard let matches, matches(event) else { return }
        kill(target, SIGKILL)
        self.matches = nil
        firedBy = event
        condition.broadcast()
    }

    /// Waits until the tripwire fired, at most `timeout` seconds, and disarms it either way.
    /// - Returns: the event that fired it, or nil.
    func wait(timeout: TimeInterval) -> ChildEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while firedBy == nil && matches != nil {
            if !condition.wait(until: deadline) { break }
        }
        matches = nil
        return firedBy
    }
}

// MARK: - state files

/// The sync fields of `phone.json` (other fields are ignored).
struct PhoneFile: Decodable {
    let lastSeq: UInt64
    let acked: Bool
    let outbox: WakeBatch?
}

/// `watch.json`.
struct WatchFile: Decodable {
    let lastAppliedSeq: UInt64
    let batch: WakeBatch?
}

func readState<T: Decodable>(_ type: T.Type, _ path: String) -> T? {
    guard let data = try? BoundedFile.read(path, limit: StateFile<String>.maxBytes) else { return nil }
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try? decoder.decode(type, from: data)
}

// MARK: - the matrix

/// An invariant broke (exit 1), or the matrix could not run (`setup`, exit 70).
struct Failure: Error {
    var message: String
    var evidence = ""
    var setup = false
}

/// One spawned phone or watch.
final class Side {
    let child: ChildProcess
    let tripwire: Tripwire
    let stateDir: String
    let label: String
    /// `open` lines written to this phone's stdin.
    var opensSent = 0

    init(child: ChildProcess, tripwire: Tripwire, stateDir: String, label: String) {
        self.child = child
        self.tripwire = tripwire
        self.stateDir = stateDir
        self.label = label
    }

    var pid: Int32 { child.pid }

    /// Events named `name`, in order.
    func events(_ name: EventName) -> [ChildEvent] { child.events.filter { $0.name == name } }

    /// The last `count` events and stderr, for a failure report.
    func tail(_ count: Int = 12) -> String {
        let lines = child.events.suffix(count).map { "    \($0.line)" }.joined(separator: "\n")
        let status = child.exitStatus.map { "exited \($0)" } ?? "running"
        let stderr = child.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
        return "  \(label) (pid \(pid), \(status)), last events:\n\(lines)"
            + (stderr.isEmpty ? "" : "\n  \(label) stderr:\n    \(stderr)")
    }
}

enum StepKind: String, CaseIterable {
    case open
    case killPhone = "kill-phone"
    case killWatch = "kill-watch"
    case pause
    case restartBoth = "restart-both"
    case handover

    /// Relative weights of the seeded choice.
    var weight: Int {
        switch self {
        case .open, .killPhone, .killWatch: 4
        case .pause: 3
        case .restartBoth, .handover: 2
        }
    }
}

struct Counts {
    var steps: [StepKind: Int] = [:]
    var opens = 0
    var phoneKills = 0
    var watchKills = 0
    /// kill -9 of the phone set to land between batch.sent and ack.received (on its batch.sent
    /// or on the watch's batch.applied).
    var phoneKillsAimedBeforeAck = 0
    /// Of those, the ones whose tripwire fired and whose phone never logged the ACK.
    var phoneKillsBeforeAck = 0
    /// kill -9 of the watch set to land between batch.applied and ack.sent.
    var watchKillsAimedBeforeAck = 0
    /// Of those, the ones whose tripwire fired and whose watch never logged ack.sent.
    var watchKillsBeforeAck = 0
    /// Kills set to fire on an event (a tripwire armed).
    var tripwiresArmed = 0
    /// Tripwires whose event did not come within the deadline (the kill came at the deadline).
    var tripwiresMissed = 0
    var restarts = 0
    var pauses = 0
    var handovers = 0
    var quietTotal: Duration = .zero
    var quietMax: Duration = .zero
}

final class Soak {
    static let quietDeadline: TimeInterval = 30
    static let eventDeadline: TimeInterval = 10
    let options: SoakOptions
    let seed: UInt64
    private var rng: SplitMix64
    let dir: String
    let endpoint: String
    let phoneURL: URL
    let watchURL: URL
    let watchId = "soak-watch"
    let clockFlags: [String]
    private var phones: [Side] = []
    private var watches: [Side] = []
    private var phone: Side!
    private var watch: Side!
    private var counts = Counts()
    private var history: [String] = []
    private var step = 0
    /// Steps run so far.
    var stepsRun: Int { step }
    private let started = ContinuousClock.now
    /// The signal that stopped the run between steps (0: none).
    private(set) var interruptedBy: Int32 = 0
    private let progress = isatty(STDERR_FILENO) == 1
    private var lastProgress = ContinuousClock.now

    init(options: SoakOptions, seed: UInt64) throws(Failure) {
        self.options = options
        self.seed = seed
        rng = SplitMix64(state: seed)
        guard let phoneURL = ChildProcess.locate("phone"), let watchURL = ChildProcess.locate("watch") else {
            throw Failure(
                message: "cannot find the phone and watch executables next to this one; run `swift build` first",
                setup: true)
        }
        self.phoneURL = phoneURL
        self.watchURL = watchURL
        do {
            dir = try Reaper.shared.makeTemporaryDirectory(prefix: "sleeptap-soak")
        } catch {
            throw Failure(message: "\(error)", setup: true)
        }
        endpoint = "ipc://\(dir)/phone.sock"
        // A virtual clock at speed 1 from Thu 2025-03-06 12:00 EST: the OS's next background
        // launch (next wake-up + 1 h) is 20 virtual hours away, so only the matrix makes batches.
        clockFlags = [
            "--clock-start", "2025-03-06T17:00:00Z", "--clock-speed", "1",
            "--clock-anchor", String(format: "%.3f", Date().timeIntervalSince1970),
        ]
    }

    // MARK: randomness (a fixed number of draws per step, so the choices replay from the seed)

    private func below(_ bound: Int) -> Int { Int(rng.next() % UInt64(bound)) }

    private func pickKind() -> StepKind {
        var roll = below(StepKind.allCases.reduce(0) { $0 + $1.weight })
        for kind in StepKind.allCases {
            if roll < kind.weight { return kind }
            roll -= kind.weight
        }
        return .open
    }

    // MARK: processes

    private func spawn(_ label: String, _ url: URL, _ arguments: [String], stateDir: String) throws(Failure) -> Side {
        let tripwire = Tripwire()
        let child: ChildProcess
        do {
            child = try ChildProcess(
                name: label, executable: url, arguments: arguments, onEvent: { tripwire.observe($0) })
        } catch {
            throw Failure(message: "cannot start \(label): \(error)", setup: true)
        }
        return Side(child: child, tripwire: tripwire, stateDir: stateDir, label: label)
    }

    private func startPhone() throws(Failure) {
        let stateDir = "\(dir)/phone"
        let arguments =
            [
                "--endpoint", endpoint, "--state-dir", stateDir, "--watch-id", watchId,
                "--time-zone", "America/New_York", "--device-seed", String(seed % 1_000_000),
            ] + clockFlags
        let side = try spawn("phone#\(phones.count + 1)", phoneURL, arguments, stateDir: stateDir)
        if !phones.isEmpty { counts.restarts += 1 }
        phones.append(side)
        phone = side
    }

    /// Starts a watch on `stateDir` (default: the current watch's).
    private func startWatch(stateDir: String? = nil) throws(Failure) {
        let stateDir = stateDir ?? watch?.stateDir ?? "\(dir)/w1"
        let arguments =
            ["--endpoint", endpoint, "--state-dir", stateDir, "--id", watchId, "--time-zone", "America/New_York"]
            + clockFlags
        let side = try spawn("watch#\(watches.count + 1)", watchURL, arguments, stateDir: stateDir)
        if !watches.isEmpty { counts.restarts += 1 }
        watches.append(side)
        watch = side
    }

    private func sendOpen() {
        phone.child.send(line: "open")
        phone.opensSent += 1
        counts.opens += 1
    }

    /// SIGKILL and wait for the exit (which releases the state-dir lock).
    private func kill9(_ side: Side) throws(Failure) {
        if side.child.isRunning { kill(side.pid, SIGKILL) }
        try awaitExit(side)
        if phones.contains(where: { $0 === side }) {
            counts.phoneKills += 1
        } else {
            counts.watchKills += 1
        }
    }

    private func awaitExit(_ side: Side) throws(Failure) {
        guard side.child.waitForExit(timeout: 5) else {
            throw Failure(message: "\(side.label) (pid \(side.pid)) did not exit within 5 s", evidence: side.tail())
        }
    }

    /// Waits until the kernel has stopped `side` (SIGSTOP is delivered asynchronously).
    private func stopAndWait(_ side: Side) throws(Failure) {
        kill(side.pid, SIGSTOP)
        let deadline = Date().addingTimeInterval(Self.eventDeadline)
        while Self.processState(side.pid) != "T" {
            guard side.child.isRunning, Date() < deadline else {
                throw Failure(message: "\(side.label) did not stop on SIGSTOP", evidence: side.tail())
            }
            usleep(1_000)
        }
    }

    /// The state letter of /proc/PID/stat (R, S, T, Z, ...), nil when gone.
    static func processState(_ pid: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].first { $0 != " " }
    }

    /// Sleeps `milliseconds`, in slices of at most 50 ms, and returns early once a signal asked
    /// the run to stop (`stopSignal`), so that a long pause step does not outlast the 2 s the
    /// signal handler waits before it cuts the step short.
    private func pause(milliseconds: Int) {
        var left = milliseconds
        while left > 0, stopSignal.load(ordering: .sequentiallyConsistent) == 0 {
            let slice = min(left, 50)
            usleep(useconds_t(slice) * 1_000)
            left -= slice
        }
    }

    // MARK: the run

    func run() throws(Failure) {
        if !options.json {
            out("sleeptap-soak: seed \(seed), \(options.steps) steps, phone and watch over \(endpoint)")
        }
        Reaper.shared.setPosition("start-up, seed \(seed)")
        try startPhone()
        try startWatch()
        try waitQuiet()
        try checkInvariants()
        for number in 1...options.steps {
            // A signal stops the run between steps: the summary so far follows (main).
            let signal = stopSignal.load(ordering: .sequentiallyConsistent)
            if signal != 0 {
                interruptedBy = signal
                clearProgress()
                return
            }
            // A closed stdout (`| head -1`) ends the run too: nobody reads its summary.
            if Self.standardOutputClosed() {
                clearProgress()
                Reaper.shared.finish(.ok)
            }
            showProgress(number)
            step = number
            Reaper.shared.setPosition("step \(number) of \(options.steps), seed \(seed)")
            let description = try runStep()
            history.append("step \(number): \(description)")
            if options.verbose { out("  step \(number): \(description)") }
            try waitQuiet()
            try checkInvariants()
        }
        clearProgress()
        // The end: stop both cleanly, read every output to the end, check the whole run once more.
        Reaper.shared.setPosition("shutdown, seed \(seed)")
        try stopGracefully([phone, watch])
        for side in phones + watches { side.child.waitForOutputEnd(timeout: 2) }
        try checkHistory()
    }

    /// Whether stdout is a pipe or socket whose reader is gone (poll(2) reports POLLERR on a pipe
    /// without a reader, POLLHUP on a closed socket); false for a terminal or a file.
    static func standardOutputClosed() -> Bool {
        var status = stat()
        guard fstat(STDOUT_FILENO, &status) == 0,
            status.st_mode & S_IFMT == S_IFIFO || status.st_mode & S_IFMT == S_IFSOCK
        else { return false }
        var entry = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLERR | POLLHUP) != 0
    }

    /// `step N of M` on stderr when it is a terminal, at most 4 times a second.
    private func showProgress(_ number: Int) {
        guard progress, number == 1 || ContinuousClock.now - lastProgress >= .milliseconds(250) else { return }
        lastProgress = ContinuousClock.now
        try? FileHandle.standardError.write(
            contentsOf: Data("\r\u{1B}[Ksleeptap-soak: step \(number) of \(options.steps) (seed \(seed))".utf8))
    }

    /// Clears the progress line, when there is one.
    func clearProgress() {
        if progress { try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[K".utf8)) }
    }

    private func runStep() throws(Failure) -> String {
        let kind = pickKind()
        counts.steps[kind, default: 0] += 1
        let last = Int(readState(PhoneFile.self, "\(phone.stateDir)/phone.json")?.lastSeq ?? 0)
        switch kind {
        case .open:
            sendOpen()
            return "open (seq > \(last))"
        case .killPhone:
            return try killPhone(last: last)
        case .killWatch:
            return try killWatch(last: last)
        case .pause:
            let side = below(2) == 0 ? phone! : watch!
            let withOpen = below(2) == 0
            // Mostly short; one in four outlasts the 3 s ZMTP heartbeat timeout, so the link drops.
            let long = below(4) == 0
            let short = 20 + below(980)
            let extra = below(500)
            let milliseconds = long ? 3_000 + short + extra : short
            try stopAndWait(side)
            if withOpen { sendOpen() }
            pause(milliseconds: milliseconds)
            kill(side.pid, SIGCONT)
            counts.pauses += 1
            return "pause: SIGSTOP \(side.label) for \(milliseconds) ms\(withOpen ? ", open meanwhile" : "")"
        case .restartBoth:
            let graceful = below(2) == 0
            let phoneFirst = below(2) == 0
            let gap = below(300)
            let old = [phone!, watch!]
            if graceful {
                try stopGracefully(old)
            } else {
                for side in old { kill(side.pid, SIGKILL) }
                for side in old { try kill9(side) }
            }
            if phoneFirst {
                try startPhone()
                pause(milliseconds: gap)
                try startWatch()
            } else {
                try startWatch()
                pause(milliseconds: gap)
                try startPhone()
            }
            return "restart-both: \(graceful ? "SIGTERM" : "kill -9") both, start "
                + "\(phoneFirst ? "phone" : "watch") first, \(gap) ms apart"
        case .handover:
            return try handover()
        }
    }

    private func killPhone(last: Int) throws(Failure) -> String {
        let point = below(6)
        let delay = below(100)
        let gap = below(200)
        let victim = phone!
        let seqAbove: @Sendable (ChildEvent) -> Bool = { ($0.int("seq") ?? 0) > last }
        var armed: Tripwire?
        let at: String
        switch point {
        case 0:
            at = "idle"
        case 1:
            sendOpen()
            at = "right after open"
        case 2:
            victim.tripwire.arm(target: victim.pid) { $0.name == .batchGenerated && seqAbove($0) }
            armed = victim.tripwire
            sendOpen()
            at = "on batch.generated"
        case 3:
            victim.tripwire.arm(target: victim.pid) { $0.name == .batchSent && seqAbove($0) }
            armed = victim.tripwire
            sendOpen()
            at = "on batch.sent"
        case 4:
            watch.tripwire.arm(target: victim.pid) { $0.name == .batchApplied && seqAbove($0) }
            armed = watch.tripwire
            sendOpen()
            at = "on the watch's batch.applied"
        default:
            sendOpen()
            pause(milliseconds: delay)
            at = "\(delay) ms after open"
        }
        var note = ""
        var fired = false
        if let armed {
            counts.tripwiresArmed += 1
            if armed.wait(timeout: Self.eventDeadline) == nil {
                counts.tripwiresMissed += 1
                note = " (tripwire missed: killed at the deadline)"
            } else {
                fired = true
            }
        }
        try kill9(victim)
        if point == 3 || point == 4 {
            counts.phoneKillsAimedBeforeAck += 1
        }
        if (point == 3 || point == 4) && fired {
            victim.child.waitForOutputEnd(timeout: 1)
            if !victim.events(.ackReceived).contains(where: seqAbove) {
                counts.phoneKillsBeforeAck += 1
                note += " (before the ACK)"
            }
        }
        pause(milliseconds: gap)
        try startPhone()
        return "kill-phone: kill -9 \(victim.label) \(at)\(note), restart after \(gap) ms"
    }

    private func killWatch(last: Int) throws(Failure) -> String {
        let point = below(4)
        let delay = below(50)
        let gap = below(200)
        let victim = watch!
        let at: String
        var armed = false
        switch point {
        case 0:
            at = "idle"
        case 1:
            victim.tripwire.arm(target: victim.pid) { $0.name == .messageReceived && $0.string("type") == "BATCH" }
            armed = true
            sendOpen()
            at = "on receiving the BATCH"
        case 2:
            victim.tripwire.arm(target: victim.pid) { $0.name == .batchApplied && ($0.int("seq") ?? 0) > last }
            armed = true
            sendOpen()
            at = "on batch.applied"
        default:
            sendOpen()
            pause(milliseconds: delay)
            at = "\(delay) ms after open"
        }
        var note = ""
        var firedSeq: Int?
        if armed {
            counts.tripwiresArmed += 1
            if let event = victim.tripwire.wait(timeout: Self.eventDeadline) {
                firedSeq = event.int("seq")
            } else {
                counts.tripwiresMissed += 1
                note = " (tripwire missed: killed at the deadline)"
            }
        }
        try kill9(victim)
        if point == 2 { counts.watchKillsAimedBeforeAck += 1 }
        if point == 2, let firedSeq {
            victim.child.waitForOutputEnd(timeout: 1)
            if !victim.events(.ackSent).contains(where: { $0.int("seq") == firedSeq }) {
                counts.watchKillsBeforeAck += 1
                note += " (before ack.sent)"
            }
        }
        pause(milliseconds: gap)
        try startWatch()
        return "kill-watch: kill -9 \(victim.label) \(at)\(note), restart after \(gap) ms"
    }

    /// A replacement watch with the same routing id and a copy of the old one's state takes over
    /// while the old one is stopped; the old one is killed once the new one is in sync.
    private func handover() throws(Failure) -> String {
        let withOpen = below(2) == 0
        let old = watch!
        try stopAndWait(old)
        let newDir = "\(dir)/w\(watches.count + 1)"
        try copyState(from: old.stateDir, to: newDir)
        try startWatch(stateDir: newDir)
        let replacement = watch!
        if withOpen { sendOpen() }
        // The phone answers the replacement's HELLO (or sends it the new batch): it took over.
        guard replacement.child.waitFor(.messageReceived, timeout: Self.quietDeadline) != nil else {
            throw Failure(
                message: "the replacement \(replacement.label) got no message from the phone within "
                    + "\(Int(Self.quietDeadline)) s while \(old.label) was stopped (ROUTER_HANDOVER)",
                evidence: [phone.tail(), replacement.tail(), old.tail()].joined(separator: "\n"))
        }
        try waitQuiet()
        try kill9(old)
        counts.handovers += 1
        return "handover: SIGSTOP \(old.label), \(replacement.label) with the same id and a copy of its state "
            + "takes over\(withOpen ? ", open meanwhile" : ""), kill -9 \(old.label)"
    }

    /// Copies the state files (not the lock, not a half-written temp file) of a stopped watch.
    private func copyState(from source: String, to destination: String) throws(Failure) {
        guard !Reaper.shared.isExiting else { throw Failure(message: "interrupted", setup: true) }
        do {
            try FileManager.default.createDirectory(
                atPath: destination, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            for name in try FileManager.default.contentsOfDirectory(atPath: source)
            where name != ".lock" && !name.contains(".tmp") {
                try FileManager.default.copyItem(atPath: "\(source)/\(name)", toPath: "\(destination)/\(name)")
            }
        } catch {
            throw Failure(message: "cannot copy \(source) to \(destination): \(error)", setup: true)
        }
    }

    /// SIGTERM to each, then each must exit 0 within 5 s (the documented clean stop).
    private func stopGracefully(_ sides: [Side]) throws(Failure) {
        for side in sides where side.child.isRunning { kill(side.pid, SIGTERM) }
        for side in sides {
            guard side.child.waitForExit(timeout: 5) else {
                let evidence = side.tail()
                kill(side.pid, SIGKILL)
                throw Failure(message: "\(side.label) did not exit within 5 s of SIGTERM", evidence: evidence)
            }
            let status = side.child.exitStatus ?? -1
            guard status == 0 else {
                throw Failure(message: "\(side.label) exited \(status) on SIGTERM, not 0", evidence: side.tail())
            }
        }
    }

    // MARK: quiet and the invariants

    /// Waits until the current phone has made every batch it was asked for, the current watch
    /// has heard from the phone, the watch's watch.json holds the phone.json lastSeq, and the
    /// phone says acked. Polls the state files every 5 ms; fails at the deadline.
    private func waitQuiet() throws(Failure) {
        let start = ContinuousClock.now
        let deadline = Date().addingTimeInterval(Self.quietDeadline)
        while true {
            for side in [phone!, watch!] where !side.child.isRunning {
                throw Failure(
                    message: "\(side.label) exited by itself (status \(side.child.exitStatus ?? -1))",
                    evidence: side.tail())
            }
            let made = phone.events(.batchGenerated).count
            // The current watch heard from the phone (its HELLO was answered): the link is up.
            let linked = watch.child.events.contains { $0.name == .messageReceived }
            let phoneState = readState(PhoneFile.self, "\(phone.stateDir)/phone.json")
            let watchState = readState(WatchFile.self, "\(watch.stateDir)/watch.json")
            if made >= 1 + phone.opensSent, linked, let phoneState, let watchState, phoneState.acked,
                watchState.lastAppliedSeq == phoneState.lastSeq
            {
                let waited = ContinuousClock.now - start
                counts.quietTotal += waited
                counts.quietMax = max(counts.quietMax, waited)
                return
            }
            if Date() >= deadline {
                let phoneText = phoneState.map { "lastSeq \($0.lastSeq), acked \($0.acked)" } ?? "missing"
                let watchText = watchState.map { "lastAppliedSeq \($0.lastAppliedSeq)" } ?? "missing"
                throw Failure(
                    message: "not quiet within \(Int(Self.quietDeadline)) s: phone.json \(phoneText); "
                        + "\(watch.label) watch.json \(watchText); \(phone.label) made \(made) of "
                        + "\(1 + phone.opensSent) batches; \(watch.label) \(linked ? "heard" : "never heard") "
                        + "from the phone",
                    evidence: [phone.tail(), watch.tail()].joined(separator: "\n"))
            }
            usleep(5_000)
        }
    }

    private func checkInvariants() throws(Failure) {
        guard let phoneState = readState(PhoneFile.self, "\(phone.stateDir)/phone.json"),
            let watchState = readState(WatchFile.self, "\(watch.stateDir)/watch.json")
        else {
            throw Failure(message: "(a) a state file is missing or unreadable", evidence: phone.tail())
        }
        // (a) the watch holds the newest batch.
        let newest = phoneState.lastSeq
        guard watchState.lastAppliedSeq == newest, let held = watchState.batch, held.seq == newest else {
            throw Failure(
                message: "(a) the watch does not hold the newest batch: phone lastSeq \(newest), "
                    + "\(watch.label) lastAppliedSeq \(watchState.lastAppliedSeq), batch \(watchState.batch?.seq ?? 0)",
                evidence: [phone.tail(), watch.tail()].joined(separator: "\n"))
        }
        guard let outbox = phoneState.outbox, outbox.entries == held.entries, outbox == held else {
            let detail =
                phoneState.outbox.map { outbox in
                    "phone outbox seq \(outbox.seq) generatedAt \(outbox.generatedAt) \(outbox.entries.count) "
                        + "entries \(outbox.entries.map(\.localDate)); watch batch seq \(held.seq) generatedAt "
                        + "\(held.generatedAt) \(held.entries.count) entries \(held.entries.map(\.localDate))"
                } ?? "the phone has no outbox"
            throw Failure(
                message: "(a) the watch's batch \(held.seq) is not the phone's outbox: \(detail)",
                evidence: [phone.tail(), watch.tail()].joined(separator: "\n"))
        }
        try checkHistory()
    }

    /// (b), (c) and (d) over every process's output so far.
    private func checkHistory() throws(Failure) {
        var applied: [(seq: Int, side: Side, line: String)] = []
        for side in watches {
            for event in side.events(.batchApplied) { applied.append((event.int("seq") ?? -1, side, event.line)) }
        }
        var firstBy: [Int: Side] = [:]
        for entry in applied {
            if let earlier = firstBy[entry.seq] {
                let lines = applied.filter { $0.seq == entry.seq }.map { "  \($0.side.label): \($0.line)" }
                throw Failure(
                    message: "(b) batch \(entry.seq) applied twice: by \(earlier.label) and \(entry.side.label)",
                    evidence: lines.joined(separator: "\n") + "\n" + earlier.tail() + "\n" + entry.side.tail())
            }
            firstBy[entry.seq] = entry.side
        }
        for (before, after) in zip(applied, applied.dropFirst()) where after.seq <= before.seq {
            throw Failure(
                message: "(c) older over newer: \(after.side.label) applied batch \(after.seq) after "
                    + "\(before.side.label) applied batch \(before.seq)",
                evidence: "  \(before.line)\n  \(after.line)\n" + after.side.tail())
        }
        let generated = phones.flatMap { side in side.events(.batchGenerated).map { (side, $0) } }
        for (before, after) in zip(generated, generated.dropFirst())
        where (after.1.int("seq") ?? 0) <= (before.1.int("seq") ?? 0) {
            throw Failure(
                message: "(d) the phone issued seq \(after.1.int("seq") ?? 0) again: \(after.0.label) after "
                    + "\(before.0.label) had issued \(before.1.int("seq") ?? 0)",
                evidence: "  \(before.1.line)\n  \(after.1.line)\n" + after.0.tail())
        }
    }

    // MARK: report

    func summary() -> String {
        func count(_ sides: [Side], _ name: EventName) -> Int { sides.reduce(0) { $0 + $1.events(name).count } }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        func ms(_ duration: Duration) -> Int {
            Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        }
        let quietSteps = max(1, step + 1)
        let kinds = StepKind.allCases.map { "\($0.rawValue) \(counts.steps[$0] ?? 0)" }.joined(separator: ", ")
        return """
            steps:     \(step) of \(options.steps) (seed \(seed)): \(kinds)
            batches:   generated \(count(phones, .batchGenerated)), sent \(count(phones, .batchSent)), \
            applied \(count(watches, .batchApplied)), duplicates \(count(watches, .batchDuplicate)), \
            stale ignored \(count(watches, .batchStale)), acks received \(count(phones, .ackReceived)), \
            epoch changes \(count(phones, .epochChanged)), ack mismatches \(count(phones, .ackMismatch)), \
            conflicts \(count(watches, .batchConflict))
            faults:    kills \(counts.phoneKills + counts.watchKills) (phone \(counts.phoneKills), \
            watch \(counts.watchKills)), phone killed after batch.sent before its ACK \(counts.phoneKillsBeforeAck) \
            of \(counts.phoneKillsAimedBeforeAck), watch killed after batch.applied before ack.sent \
            \(counts.watchKillsBeforeAck) of \(counts.watchKillsAimedBeforeAck), pauses \(counts.pauses), \
            handovers \(counts.handovers), tripwires missed \(counts.tripwiresMissed) of \(counts.tripwiresArmed)
            processes: restarts \(counts.restarts) (phones \(phones.count), watches \(watches.count)), \
            opens \(counts.opens)
            time:      \(String(format: "%.1f", seconds)) s; until quiet: mean \
            \(ms(counts.quietTotal) / quietSteps) ms, max \(ms(counts.quietMax)) ms
            """
    }

    /// The summary as one JSON Lines object (`--json`): `event` "soak.summary", `time` (wall, UTC, milliseconds), `source` "soak",
    /// `result` ("passed" or "failed"), `message` (what broke, or null), `seed`, `steps` (asked),
    /// `stepsRun`, `stepsByKind` (an object: the steps run of each kind), the batch counts, and the fault counts:
    /// `phoneKillsAimedBeforeAck` / `phoneKillsBeforeAck`, `watchKillsAimedBeforeAck` /
    /// `watchKillsBeforeAck`, `tripwiresArmed` / `tripwiresMissed`, `pauses`, `handovers`, `restarts`.
    func summaryEvent(failure: Failure?) -> Event {
        func count(_ sides: [Side], _ name: EventName) -> EventValue {
            .int(Int64(sides.reduce(0) { $0 + $1.events(name).count }))
        }
        func int(_ value: Int) -> EventValue { .int(Int64(value)) }
        var fields: [(String, EventValue)] = [
            ("result", .string(failure != nil ? "failed" : interruptedBy != 0 ? "interrupted" : "passed")),
            ("message", failure.map { .string($0.message) } ?? .null),
            ("seed", .string(String(seed))), ("steps", int(options.steps)), ("stepsRun", int(step)),
        ]
        fields.append(
            ("stepsByKind", .object(EventObject(StepKind.allCases.map { ($0.rawValue, int(counts.steps[$0] ?? 0)) }))))
        fields += [
            ("batchesGenerated", count(phones, .batchGenerated)), ("batchesSent", count(phones, .batchSent)),
            ("batchesApplied", count(watches, .batchApplied)), ("duplicates", count(watches, .batchDuplicate)),
            ("staleIgnored", count(watches, .batchStale)), ("acksReceived", count(phones, .ackReceived)),
            ("epochChanges", count(phones, .epochChanged)), ("ackMismatches", count(phones, .ackMismatch)),
            ("batchConflicts", count(watches, .batchConflict)), ("opens", int(counts.opens)),
            ("phoneKills", int(counts.phoneKills)), ("watchKills", int(counts.watchKills)),
            ("phoneKillsAimedBeforeAck", int(counts.phoneKillsAimedBeforeAck)),
            ("phoneKillsBeforeAck", int(counts.phoneKillsBeforeAck)),
            ("watchKillsAimedBeforeAck", int(counts.watchKillsAimedBeforeAck)),
            ("watchKillsBeforeAck", int(counts.watchKillsBeforeAck)),
            ("tripwiresArmed", int(counts.tripwiresArmed)), ("tripwiresMissed", int(counts.tripwiresMissed)),
            ("pauses", int(counts.pauses)), ("handovers", int(counts.handovers)), ("restarts", int(counts.restarts)),
            ("tzdata", .string(ZoneDatabase.current.version)),
            ("signal", interruptedBy != 0 ? int(Int(interruptedBy)) : .null),
        ]
        return Event(.soakSummary, fields)
    }

    /// The failure report: what broke, where, how to replay, the steps before it, the evidence.
    func report(_ failure: Failure) -> String {
        let recent = history.suffix(15).map { "  \($0)" }.joined(separator: "\n")
        return """
            sleeptap-soak: INVARIANT BROKEN at step \(step) of \(options.steps), seed \(seed)
            \(failure.message)
            replay: sleeptap-soak --seed \(seed) --steps \(max(step, 1))
            steps before it (the last 15):
            \(recent.isEmpty ? "  (none: it broke at start-up)" : recent)
            evidence:
            \(failure.evidence)
            """
    }
}

// MARK: - main

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)
// `sleeptap-soak exhaustion ...` is the date-exhaustion soak; `sleeptap-soak [faults] ...` the
// fault matrix below.
var soakArguments = Array(CommandLine.arguments.dropFirst())
if soakArguments.first == "exhaustion" { runExhaustion(Array(soakArguments.dropFirst())) }
if soakArguments.first == "faults" { soakArguments.removeFirst() }
let options = Reaper.commandLine(SoakOptions.command) { () throws(UsageError) in
    try SoakOptions.parse(soakArguments)
}

// Every child and the temp dir go on every path: SIGINT, SIGTERM, SIGHUP, a closed stdout, the
// end of the run and a failure (`Reaper`); SIGKILL leaves the children to their parent-death signal.
// A signal stops the run between steps, and the summary so far is printed; a step that does not
// end within 2 s is cut short as `Reaper`'s own handlers would.
let signalSources = installStopSignalHandlers { number in
    guard Reaper.shared.claimExit() else { return }
    complain("sleeptap-soak: \(String(cString: strsignal(number))) (signal \(number)) during a step; cleaning up")
    Reaper.shared.cleanUp()
    exit(128 + number)
}

let soak: Soak
do {
    soak = try Soak(options: options, seed: options.seed ?? UInt64.random(in: 0...UInt64.max))
} catch {
    Reaper.shared.finish(.software) { complain("sleeptap-soak: \(error.message)") }
}
do {
    try soak.run()
    if soak.interruptedBy != 0 {
        guard Reaper.shared.claimExit() else { while true { pause() } }
        Reaper.shared.cleanUp()
        let name = String(cString: strsignal(soak.interruptedBy))
        if options.json {
            out(soak.summaryEvent(failure: nil).jsonLine(time: Date(), process: .soak))
        } else {
            out(soak.summary())
            out("sleeptap-soak: interrupted by \(name) after step \(soak.stepsRun); invariants held on every step run")
        }
        exit(128 + soak.interruptedBy)
    }
    Reaper.shared.finish(.ok) {
        if options.json {
            out(soak.summaryEvent(failure: nil).jsonLine(time: Date(), process: .soak))
        } else {
            out(soak.summary())
            out("sleeptap-soak: all invariants held")
        }
    }
} catch {
    soak.clearProgress()
    if error.setup {
        Reaper.shared.finish(.software) { complain("sleeptap-soak: \(error.message)") }
    }
    Reaper.shared.finish(.failure) {
        complain(soak.report(error) + "\n" + soak.summary())
        if options.json { out(soak.summaryEvent(failure: error).jsonLine(time: Date(), process: .soak)) }
    }
}
