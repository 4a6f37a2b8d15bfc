// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS
import SleepTapProcess
import SleepTapRuntime
import SleepTapScenario
import Testing

/// The simulated OS outlives the phone process (os.json): over ipc, in accelerated virtual time.
@Suite("the simulated OS outlives the phone process", .serialized)
struct OSStateTests {
    /// Virtual Mon 2026-06-01 03:00 UTC a wall second from now, 12 virtual hours per wall
    /// second: the phones start before the 07:00 wake-up, the first refresh request (earliest
    /// 08:00) launches about 1.5 wall seconds in, the next one (the next day) 2 wall seconds later.
    static func clock() -> [String] {
        let anchor = String(format: "%.3f", Date().addingTimeInterval(1).timeIntervalSince1970)
        return [
            "--clock-start", "2026-06-01T03:00:00Z", "--clock-speed", "43200", "--clock-anchor", anchor,
            "--time-zone", "UTC", "--os-seed", "5",
        ]
    }

    /// One phone run on its own state dir and socket (`name`), restarted by `restart()`.
    final class PhoneRun {
        let scenario: Scenario
        let name: String
        let arguments: [String]
        /// The phone processes of this run, one per start.
        private(set) var lives: [ChildProcess] = []

        init(_ scenario: Scenario, name: String, clock: [String], extra: [String] = []) throws {
            self.scenario = scenario
            self.name = name
            arguments =
                ["--endpoint", "ipc://\(scenario.dir)/\(name).sock", "--state-dir", "\(scenario.dir)/\(name)"] + clock
                + extra
            try start()
        }

        var phone: ChildProcess {
            get throws { try #require(lives.last) }
        }

        func start() throws { lives.append(try scenario.spawn("phone", arguments)) }

        /// `quit`, wait for the exit (status 0), start again on the same state dir.
        func restart() throws { try Self.restart([self]) }

        /// Restarts several runs together: `quit` to all, wait for every exit, start them all.
        static func restart(_ runs: [PhoneRun]) throws {
            let phones = try runs.map { try $0.phone }
            for phone in phones { phone.send(line: "quit") }
            for (run, phone) in zip(runs, phones) {
                try #require(phone.waitForExit(timeout: Scenario.deadline), "\(run.name) did not stop on quit")
                #expect(phone.exitStatus == 0, "\(phone.standardError)")
            }
            for run in runs { try run.start() }
        }

        /// The next background launch in a fresh `phone.status`.
        func nextBackgroundLaunch() throws -> String? {
            let phone = try phone
            let from = phone.events.count
            phone.send(line: "status")
            return try phone.expect(.phoneStatus, from: from).event.string("nextBackgroundLaunch")
        }

        /// Waits for the OS's next natural launch from `from` and the end of its run.
        /// - Returns: the launch's virtual time and the plannedLaunch the run's resubmission drew.
        func awaitLaunch(from: Int) throws -> (launchedAt: Date, planned: String) {
            let phone = try phone
            let launch = try phone.expect(.osLaunch, from: from) { $0.fields["simulated"] as? Bool == false }
            let submitted = try phone.expect(.osRequestSubmitted, from: launch.index)
            try phone.expect(.handlerCompleted, from: launch.index)
            return (
                try #require(launch.event.time), try #require(submitted.event.string("plannedLaunch"))
            )
        }

        /// The delay the OS drew for the request submitted at this start: plannedLaunch − earliestBeginDate.
        func startDelay() throws -> TimeInterval {
            let submitted = try phone.expect(.osRequestSubmitted).event
            let planned = try #require(submitted.string("plannedLaunch").flatMap(ISO8601.date))
            let earliest = try #require(submitted.string("earliestBeginDate").flatMap(ISO8601.date))
            return planned.timeIntervalSince(earliest)
        }

        /// Every os.* event of every start, in order, as name + fields; `time` only for launches
        /// (the instants the OS chose; the others happen when the test acted).
        var osEvents: [String] {
            lives.flatMap(\.events).filter { $0.source == .os }.map { event in
                // os.why's nested `reasons` is read back as a dictionary (its printed order varies);
                // `reasonCodes` and `summary` say the same in a fixed order.
                let fields = event.fields.filter {
                    ($0.key != "time" || event.name == .osLaunch) && !(event.name == .osWhy && $0.key == "reasons")
                }
                return fields.keys.sorted().map { "\($0)=\(fields[$0] ?? "")" }.joined(separator: " ")
            }
        }
    }

    @Test(
        "A restarted phone keeps its pending request and the OS's draws: the launch comes as planned, two restarts draw different delays, and the same seed replays the same os.* events"
    )
    func restartKeepsTheOS() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = Self.clock()
        // Two identical runs side by side: same seed, same clock, the same steps at about the
        // same virtual instants (each step is taken for both before the next).
        // On legacy's draws: under the usage model every start is a user open, which the OS learns
        // and draws the pending launch again from, by design.
        let runs = try ["a", "b"].map {
            try PhoneRun(scenario, name: $0, clock: clock, extra: ["--opportunity-model", "legacy"])
        }
        var delays = try runs.map { [try $0.startDelay()] }
        var planned = try runs.map { try $0.awaitLaunch(from: 0).planned }
        for (run, launch) in zip(runs, planned) { #expect(try run.nextBackgroundLaunch() == launch) }
        for restart in 1...2 {
            try PhoneRun.restart(runs)
            for (index, run) in runs.enumerated() {
                try run.phone.expect(.phoneStarted) { $0.string("osState") == "stored" }
                delays[index].append(try run.startDelay())
                // The pending request survived the restart: the same planned launch.
                #expect(try run.nextBackgroundLaunch() == planned[index], "restart \(restart)")
            }
            guard restart == 1 else { break }
            for (index, run) in runs.enumerated() {
                // And it comes as planned.
                let launch = try run.awaitLaunch(from: 0)
                #expect(launch.launchedAt == ISO8601.date(planned[index]))
                planned[index] = launch.planned
            }
        }
        // Each restart's request has its own draw (a phone re-seeded at start repeats the first one).
        #expect(delays[0][1] != delays[0][2], "\(delays[0])")
        #expect(delays[0] == delays[1])
        #expect(runs[0].osEvents == runs[1].osEvents)
        #expect(runs[0].osEvents.count > 10)
    }

    @Test("stdin registration and reboot: the update and the reboot are the OS's, kept across a restart")
    func registrationAndReboot() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let run = try PhoneRun(
            scenario, name: "r", clock: ["--time-zone", "Europe/Berlin", "--clock-start", "2026-06-01T08:00:00Z"])
        let phone = try run.phone
        try phone.expect(.refreshForeground)
        phone.send(line: "registration late-silent")
        let update = try phone.expect(.osRegistration)
        #expect(update.event.string("registration") == "late-silent")
        try phone.expect(.osAppUpdated, from: update.index)
        phone.send(line: "registration sometimes")
        try phone.expect(.inputRejected) { $0.string("input") == "registration sometimes" }
        phone.send(line: "force-quit")
        try phone.expect(.osForceQuit)
        #expect(try run.nextBackgroundLaunch() == nil)
        phone.send(line: "reboot")
        let reboot = try phone.expect(.osReboot)
        try phone.expect(.osRebooted, from: reboot.index)
        // iOS: the reboot lifts the force-quit; the request is still pending.
        let afterReboot = try run.nextBackgroundLaunch()
        #expect(afterReboot != nil)
        try run.restart()
        let restarted = try run.phone
        let started = try restarted.expect(.phoneStarted).event
        #expect(started.string("registration") == "late-silent")
        #expect(started.string("osState") == "stored")
        restarted.send(line: "status")
        let status = try restarted.expect(.phoneStatus).event
        #expect(status.object("os")?["registrationMode"] as? String == "late-silent")
        #expect(status.object("os")?["reboots"] as? Int == 1)
        let registered = try restarted.expect(.handlerRegistered).event
        #expect(registered.string("phase") == "after launch")
    }

    @Test(
        "stdin notifications denied and clock-set -12h over ipc: the notices fail, the batch is planned from the wall clock, and a restarted phone keeps both (os.json)"
    )
    func notificationsAndClockKept() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let run = try PhoneRun(
            scenario, name: "n", clock: ["--time-zone", "UTC", "--clock-start", "2026-06-01T12:00:00Z"])
        let phone = try run.phone
        try phone.expect(.refreshForeground)
        phone.send(line: "notifications denied")
        try phone.expect(.osNotifications) { $0.string("authorization") == "denied" }
        phone.send(line: "clock-set -12h")
        let set = try phone.expect(.osClockSet)
        #expect((set.event.fields["offset"] as? NSNumber)?.doubleValue == -43_200)
        try phone.expect(.osTimeChanged, from: set.index)
        phone.send(line: "clock-set 12h")
        try phone.expect(.inputRejected) { $0.string("input") == "clock-set 12h" }
        try run.restart()
        let restarted = try run.phone
        // The start's open: the wall clock reads about 2026-06-01 00:00 UTC, so the first wake-up
        // is 2026-06-01 07:00 UTC (past in true time; with a right clock it would be 06-02's),
        // and every notice fails.
        let batch = try restarted.expect(.batchGenerated)
        #expect(batch.event.string("first") == "2026-06-01T07:00:00Z")
        let failed = try restarted.expect(.notificationFailed)
        #expect(failed.event.string("domain") == "UNErrorDomain")
        #expect(failed.event.int("code") == 1)
        #expect(!restarted.events.contains { $0.name == .notificationAdded })
        let os = try String(contentsOfFile: "\(scenario.dir)/n/os.json", encoding: .utf8)
        #expect(os.contains("\"wallClockOffset\":-43200"))
        #expect(os.contains("\"notificationAuthorization\":\"denied\""))
    }

    @Test(
        "An os.json instant beyond 9999 (a pending request's earliestBeginDate of 1e300) is moved aside naming the field; the phone starts and quits"
    )
    func storedInstantOutOfRange() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let stateDir = "\(scenario.dir)/phone"
        let path = stateDir + "/os.json"
        let first = try scenario.phone()
        try first.expect(.phoneStarted)
        first.send(line: "quit")
        try #require(first.waitForExit(timeout: Scenario.deadline))
        let written = try #require(FileManager.default.contents(atPath: path))
        var stored = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        var ios = try #require(stored["ios"] as? [String: Any])
        var pending = try #require(ios["pending"] as? [String: Any], "a new phone submits its refresh request")
        pending["earliestBeginDate"] = 1e300
        ios["pending"] = pending
        stored["ios"] = ios
        let edited = try JSONSerialization.data(withJSONObject: stored)
        #expect(FileManager.default.createFile(atPath: path, contents: edited))
        let phone = try scenario.phone()
        let recovered = try phone.expect(.stateRecovered) { $0.string("path") == path }.event
        #expect(recovered.string("reason")?.contains("earliestBeginDate") == true, "\(recovered)")
        #expect(recovered.string("reason")?.contains("1970") == true, "\(recovered)")
        try phone.expect(.phoneStarted)
        phone.send(line: "quit")
        #expect(phone.waitForExit(timeout: Scenario.deadline) && phone.exitStatus == 0)
        let moved = try #require(recovered.string("movedTo"), "\(recovered)")
        #expect(FileManager.default.contents(atPath: moved) == edited, "the bad file is kept byte for byte")
    }

    @Test("A bad os.json is moved aside and the OS starts new; --platform against the stored OS exits 64 and leaves it")
    func badStoredOS() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let stateDir = "\(scenario.dir)/phone"
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let path = stateDir + "/os.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{\"version\": 1, \"plat".utf8)))
        let phone = try scenario.phone()
        let recovered = try phone.expect(.stateRecovered) { $0.string("path") == path }.event
        #expect(recovered.string("from") == "clean start")
        try phone.expect(.phoneStarted) { $0.string("osState") == "new" }
        try phone.expect(.refreshForeground)
        phone.send(line: "quit")
        try #require(phone.waitForExit(timeout: Scenario.deadline))
        let stored = try #require(FileManager.default.contents(atPath: path))
        let (status, stderr) = try scenario.runToExit(
            "phone",
            [
                "--endpoint", scenario.endpoint, "--state-dir", stateDir, "--platform", "android",
            ])
        #expect(status == 64, "\(stderr)")
        #expect(stderr.contains("--platform android") && stderr.contains("holds an ios device"), "\(stderr)")
        #expect(FileManager.default.contents(atPath: path) == stored)
    }

    @Test(
        "Android: os.json holds the OS after the job completed, not the launch step's stale tail (the offline forecast answered after its list)"
    )
    func osStateAfterCompletion() throws {
        // The first background run (Tue 2026-03-03 08:00 UTC, with the 6 h interval) fetches the
        // weather: the forecast's answer completes the job. Before the fix the driver answered it
        // inside the launch step's action list, whose tail, computed before the job completed,
        // then wrote os.json with the OS as it was before the run.
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone([
            "--platform", "android", "--bucket", "active", "--time-zone", "UTC", "--clock-start",
            "2026-03-02T12:00:00Z", "--clock-speed", "20000", "--device-seed", "1",
        ])
        let entered = try phone.expect(.handlerEntered).index
        try phone.expect(.weatherFetched, from: entered)
        let completed = try phone.expect(.handlerCompleted, from: entered).index
        // `status` writes nothing: once it is answered, the launch's whole action list is done.
        phone.send(line: "status")
        try phone.expect(.phoneStatus, from: completed)
        let path = "\(scenario.dir)/phone/os.json"
        let data = try #require(FileManager.default.contents(atPath: path))
        let stored = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let android = try #require(stored["android"] as? [String: Any])
        let work = try #require((android["works"] as? [String: Any])?["net.sleeptap.refresh"] as? [String: Any])
        #expect(work["running"] == nil, "os.json still holds the run as running: \(work)")
        #expect((work["periodCount"] as? Int ?? 0) >= 1, "os.json does not count the completed period: \(work)")
    }

    @Test(
        "Android, the order hazard against the twin: the phone killed right after its first background run leaves the os.json the twin's OS store holds for the same inputs"
    )
    func killedAfterCompletionMatchesTheTwin() throws {
        // The first background run fetches the weather (Tue 2026-03-03 08:00 UTC): its forecast
        // completes the job. The process is SIGKILLed once that run's actions are done (no clean
        // quit writes os.json again), and the twin, built from the same command lines, runs to the
        // same instant. Before the driver answered a forecast after its action list, the
        // process's os.json kept the run as running and periodCount 0, the twin's 1.
        let scenario = try Scenario()
        defer { scenario.close() }
        let start = try #require(ISO8601.date("2026-03-02T12:00:00Z"))
        let clock = [
            "--clock-start", ISO8601.string(start), "--clock-speed", "20000", "--clock-anchor",
            String(format: "%.3f", Date().timeIntervalSince1970),
        ]
        let phoneArguments =
            [
                "--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone", "--platform", "android",
                "--bucket", "active", "--time-zone", "UTC", "--device-seed", "1", "--os-seed", "3",
            ] + clock
        let phone = try scenario.spawn("phone", phoneArguments)
        let startedAt = try #require(try phone.expect(.phoneStarted).event.time)
        let entered = try phone.expect(.handlerEntered).index
        try phone.expect(.weatherFetched, from: entered)
        let completed = try phone.expect(.handlerCompleted, from: entered)
        let completedAt = try #require(completed.event.time)
        // `status` writes nothing: once it is answered, the launch's whole action list is done.
        phone.send(line: "status")
        try phone.expect(.phoneStatus, from: completed.index)
        phone.stop(signal: SIGKILL)
        let stored = try #require(
            try StateFile<SimulatedOS>(path: "\(scenario.dir)/phone/os.json", dateFormat: .secondsSince1970).load())

        let built = try TwinBuilder.make(
            phone: phoneArguments,
            watch: ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/watch"] + clock)
        // No watch in this run: the twin's never boots before the end.
        let twin = TwinReplay.run(
            built, start: start, end: completedAt.addingTimeInterval(1), phoneStarted: startedAt,
            watchStarted: completedAt.addingTimeInterval(86_400), inputs: [(start, .link(up: false))])
        let twinOS = try #require(twin.osStore.held)
        #expect(twin.events(.handlerCompleted, from: .phone).count == 1)
        // `lastNow` is the instant of the OS's last call: the status line's, later in the process.
        let differences = StoredState.differences(
            "os.json", StoredState.tree(stored), StoredState.tree(twinOS), tolerance: 2, ignoring: ["lastNow"])
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }
}
