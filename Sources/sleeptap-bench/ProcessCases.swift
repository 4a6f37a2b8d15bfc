// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess

#if canImport(Glibc)
    import Glibc
#endif

/// A real phone and watch over ipc in a temp dir, as the demo and the soak start them.
final class ProcessPair {
    let directory: String
    let endpoint: String
    private(set) var phone: ChildProcess
    private(set) var watch: ChildProcess
    private let watchURL: URL
    /// The clock speed of the durable and restart cases.
    static let fineClockSpeed = 100.0
    /// Both processes' clock flags (`--clock-start --clock-speed --clock-anchor`), or none.
    private let clockArguments: [String]
    /// Virtual seconds per wall second (1: wall time).
    let clockSpeed: Double
    /// The wall instant at which virtual time is that same instant (nil: wall time).
    private let clockAnchor: Date?

    /// Starts phone and watch and waits until the phone has the ACK of its first batch.
    /// - Parameter clockSpeed: 1 for wall time; more makes their event times finer: the events'
    ///   `time` is virtual time to the millisecond, so at 100 it resolves 10 µs of wall time. The
    ///   round trip itself runs on wall-time timers (resends, heartbeats) either way.
    /// - Throws: `BenchFailure` when they are not built, do not start or do not sync in 30 s.
    init(directory: String, clockSpeed: Double = 1) throws {
        guard let phoneURL = ChildProcess.locate("phone"), let watchURL = ChildProcess.locate("watch") else {
            throw BenchFailure("phone and watch not found beside \(CommandLine.arguments[0]); build the package")
        }
        self.directory = directory
        self.watchURL = watchURL
        self.clockSpeed = clockSpeed
        let anchor = Date().timeIntervalSince1970.rounded(.down)
        clockAnchor = clockSpeed == 1 ? nil : Date(timeIntervalSince1970: anchor)
        clockArguments =
            clockSpeed == 1
            ? []
            : [
                "--clock-start", ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: anchor)),
                "--clock-speed", String(Int(clockSpeed)), "--clock-anchor", String(Int(anchor)),
            ]
        endpoint = "ipc://\(directory)/run/phone.sock"
        phone = try ChildProcess(
            name: "phone", executable: phoneURL,
            arguments: ["--endpoint", endpoint, "--state-dir", directory + "/phone"] + clockArguments)
        watch = try Self.startWatch(watchURL, endpoint: endpoint, directory: directory, clock: clockArguments)
        guard phone.waitFor(.ackReceived, timeout: 30) != nil else {
            throw BenchFailure("phone and watch did not sync in 30 s; phone stderr: \(phone.standardError)")
        }
    }

    private static func startWatch(
        _ url: URL, endpoint: String, directory: String, clock: [String]
    ) throws -> ChildProcess {
        try ChildProcess(
            name: "watch", executable: url,
            arguments: ["--endpoint", endpoint, "--state-dir", directory + "/watch"] + clock)
    }

    /// Ends both (SIGTERM, then SIGKILL after 3 s).
    func stop() {
        phone.stop()
        watch.stop()
    }

    /// The size of a state file, bytes (what each of its saves writes): `watch/watch.json`, ...
    func stateBytes(_ file: String) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + file)
        return (attributes?[.size] as? NSNumber)?.intValue ?? 2_048
    }

    /// The arrival of the first line of `child` at or after line `from` with this event and seq.
    private static func arrival(_ child: ChildProcess, from: Int, event: String, seq: Int) -> Date? {
        for line in child.outputLines.dropFirst(from) where line.text.contains("\"\(event)\"") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any],
                object["event"] as? String == event, (object["seq"] as? NSNumber)?.intValue == seq
            else { continue }
            return line.arrived
        }
        return nil
    }

    /// One durable round trip: `open` makes the phone issue a batch; measured from the phone's
    /// `batch.sent` (the BATCH is on the socket) to its `ack.received` (the watch stored it with
    /// fsync and ACKed, the phone stored the ACK with fsync).
    ///
    /// The start is the phone's own time of `batch.sent` (its virtual clock, mapped back to wall
    /// time; at 100x its milliseconds are 10 µs of wall time). The end is when the bench read
    /// `ack.received` on the phone's stdout: that event's `time` is when the ACK arrived, before
    /// the phone's write, so it cannot serve. Reading a line adds the pipe and the reader
    /// thread's wake-up to the figure; the C floor's end is read the same way
    /// (`DurableBaseline.sample()`), so both carry it.
    /// - Returns: seconds.
    func durableRoundTrip() throws -> Double {
        let fromLine = phone.outputLines.count
        let fromEvent = phone.events.count
        phone.send(line: "open")
        guard let generated = phone.waitFor(.batchGenerated, from: fromEvent, timeout: 10)?.event,
            let seq = generated.int("seq")
        else { throw BenchFailure("the phone made no batch after `open` in 10 s") }
        guard
            phone.waitFor(.ackReceived, from: fromEvent, timeout: 10, where: { $0.int("seq") == seq }) != nil,
            let sent = phone.waitFor(.batchSent, from: fromEvent, timeout: 1, where: { $0.int("seq") == seq })?.event
                .time,
            let acked = Self.arrival(phone, from: fromLine, event: "ack.received", seq: seq)
        else { throw BenchFailure("batch \(seq) was not sent and acknowledged in 10 s") }
        return acked.timeIntervalSince(wallTime(ofVirtual: sent))
    }

    /// The wall instant of a virtual instant of phone and watch.
    func wallTime(ofVirtual instant: Date) -> Date {
        guard let anchor = clockAnchor else { return instant }
        return anchor.addingTimeInterval(instant.timeIntervalSince(anchor) / clockSpeed)
    }

    /// kill -9 the watch, let the phone issue a newer batch, start a new watch on the same state
    /// dir, and time from its spawn to its `batch.applied` of that batch (as read from its stdout).
    /// - Returns: seconds in all, and of them seconds until its `watch.started` (exec, dynamic
    ///   loading, the state dir's lock, the state file read).
    func restartToNewestBatch() throws -> (total: Double, startUp: Double) {
        kill(watch.pid, SIGKILL)
        guard watch.waitForExit(timeout: 10) else { throw BenchFailure("the watch did not die of SIGKILL in 10 s") }
        let fromEvent = phone.events.count
        phone.send(line: "open")
        guard let generated = phone.waitFor(.batchGenerated, from: fromEvent, timeout: 10)?.event,
            let seq = generated.int("seq")
        else { throw BenchFailure("the phone made no batch after `open` in 10 s") }
        let start = Date()
        watch = try Self.startWatch(watchURL, endpoint: endpoint, directory: directory, clock: clockArguments)
        guard watch.waitFor(.batchApplied, timeout: 10, where: { $0.int("seq") == seq }) != nil,
            let applied = Self.arrival(watch, from: 0, event: "batch.applied", seq: seq)
        else { throw BenchFailure("the restarted watch did not apply batch \(seq) in 10 s: \(watch.standardError)") }
        let started = watch.outputLines.first { $0.text.contains("\"watch.started\"") }?.arrived ?? applied
        // Let the phone take the ACK before the next measurement.
        _ = phone.waitFor(.ackReceived, from: fromEvent, timeout: 10, where: { $0.int("seq") == seq })
        return (applied.timeIntervalSince(start), started.timeIntervalSince(start))
    }

    /// CPU and memory of one process over a window.
    struct Usage {
        /// Percent of one core: (utime + stime) over the window.
        var cpuPercent: Double
        /// Resident set size at the end, kilobytes (`VmRSS`).
        var rssKB: Double
    }

    /// Samples /proc/PID/stat (utime + stime, clock ticks) of phone and watch at the start and end
    /// of `seconds` of idleness, and VmRSS from /proc/PID/status at the end.
    func idleUsage(seconds: Double) throws -> (phone: Usage, watch: Usage) {
        let pids = [phone.pid, watch.pid]
        let before = try pids.map(Self.cpuTicks)
        let start = DispatchTime.now().uptimeNanoseconds
        usleep(useconds_t(seconds * 1e6))  // the measurement window itself, not a synchronisation
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let after = try pids.map(Self.cpuTicks)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let usage = try pids.indices.map { index in
            Usage(
                cpuPercent: Double(after[index] - before[index]) / ticks / elapsed * 100,
                rssKB: try Self.residentKB(pids[index]))
        }
        return (usage[0], usage[1])
    }

    /// utime + stime of a process, clock ticks (fields 14 and 15 of /proc/PID/stat, proc(5)).
    static func cpuTicks(_ pid: Int32) throws -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { throw BenchFailure("cannot read /proc/\(pid)/stat") }
        // After the command name in parentheses: field 3 (state) is index 0, utime (14) index 11.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw BenchFailure("/proc/\(pid)/stat: unexpected format")
        }
        return user + system
    }

    /// VmRSS of a process, kilobytes (/proc/PID/status, proc(5)).
    static func residentKB(_ pid: Int32) throws -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({
                Double($0)
            })
        else { throw BenchFailure("cannot read VmRSS from /proc/\(pid)/status") }
        return value
    }
}
