// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapProcess

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-demo: the story told in README.md, end to end, as two real processes over an ipc socket
// in accelerated virtual time.
//
// Part 1, the bug: the phone registers its refresh handler too late (SwiftUI .backgroundTask on
// iOS 26.6). Submitting succeeds, the OS launches the app for the refresh, and the handler is
// never entered. The watch uses one cached date a night; on night 8 it asks for the wake time by
// hand. Opening the phone app once refills the dates.
// Part 2, the fix: the same phone registers early (AppDelegate). The consolidated job runs in the
// background every morning (renew, notices and dates, weather) and the dates never run out.

/// Writes a line to stdout at once (unbuffered, so a watching person sees it as it happens).
/// When nobody reads any more (`sleeptap-demo | head`: EPIPE) the demo stops its children,
/// removes its temp dir and exits 0.
@Sendable func out(_ line: String = "") {
    Reaper.shared.writeLine(line)
}

/// Ends the demo with exit 1: stops the children, removes the temp dir, prints `message`.
func fail(_ message: String, kept: String? = nil) -> Never {
    Reaper.shared.finish(.failure) {
        if let kept { Reaper.shared.writeError("sleeptap-demo: state and sockets kept in \(kept)") }
        Reaper.shared.writeError("sleeptap-demo: \(message)")
    }
}

/// Turns events into sentences as they arrive (called on the children's reader threads).
final class Narrator: @unchecked Sendable {
    private let lock = NSLock()
    private let formatter: DateFormatter
    private let raw: Bool
    private var night = 0
    private var registrationPhase: String?

    init(zone: TimeZone, raw: Bool) {
        formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "EEE MMM d HH:mm zzz"
        self.raw = raw
    }

    func local(_ iso: String?) -> String {
        guard let iso, let date = ISO8601.date(iso) else { return "?" }
        return formatter.string(from: date)
    }

    func say(_ who: String, _ text: String) {
        out("\(who.padding(toLength: 6, withPad: " ", startingAt: 0)) | \(text)")
    }

    func phone(_ event: ChildEvent) {
        lock.lock()
        defer { lock.unlock() }
        if raw { out("         \(event.line)") }
        let at = local(event.string("time"))
        switch event.name {
        case .handlerRegistered:
            // Every launch registers again; say it once per way of registering.
            let phase = event.string("phase") ?? "?"
            if phase != registrationPhase {
                registrationPhase = phase
                say("phone", "\(at): registers its refresh handler (\(phase)); every launch does the same")
            }
        case .renewSubmitted:
            say(
                "phone",
                "\(at): asks the OS for a background refresh, not before \(local(event.string("earliestBeginDate")))")
        case .submitFailed:
            say("phone", "\(at): submit FAILED: \(event.string("reason") ?? "?")")
        case .osLaunchDropped:
            say(
                "os",
                "\(at): launches the app for the refresh, but no handler was registered in time: handler NEVER entered")
        case .handlerEntered:
            say("phone", "\(at): background refresh, handler entered")
        case .batchGenerated:
            say(
                "phone",
                "\(at): batch #\(event.int("seq") ?? 0): \(event.int("count") ?? 0) wake-ups, "
                    + "\(local(event.string("first"))) ... \(local(event.string("last")))")
        case .weatherFetched:
            say("phone", "\(at): weather fetched (\(event.string("reason") ?? ""))")
        case .handlerCompleted:
            let success = event.fields["success"] as? Bool == true
            say("phone", "\(at): handler completed, \(success ? "success" : "UNSUCCESSFUL")")
        case .appCrashed:
            say("phone", "\(at): CRASH: \(event.string("message") ?? "?")")
        default:
            break
        }
    }

    func watch(_ event: ChildEvent) {
        lock.lock()
        defer { lock.unlock() }
        if raw { out("         \(event.line)") }
        let at = local(event.string("time"))
        switch event.name {
        case .batchApplied:
            say(
                "watch",
                "\(at): stored batch #\(event.int("seq") ?? 0) on disk, then acked: dates through "
                    + local(event.string("coverageEnd")))
        case .bedWakeTime:
            night += 1
            say(
                "watch",
                "night \(night), \(at): bed -> alarm \(local(event.string("wakeTime"))) "
                    + "(\(max((event.int("remaining") ?? 1) - 1, 0)) more cached)")
        case .fallbackManualEntry:
            night += 1
            say("watch", "night \(night), \(at): bed -> NO cached date covers the coming wake-up: asks for it by hand")
        case .coverageLow:
            let left = event.int("nightsLeft") ?? 0
            let through = event.string("coverageEnd").map { " (through \(local($0)))" } ?? ""
            say("watch", "\(at): only \(left) night\(left == 1 ? "" : "s") of wake-up dates left\(through)")
        case .manualWakeTime:
            say("user", "types the wake time -> alarm \(local(event.string("wakeTime")))")
        default:
            break
        }
    }
}

func runDemo() -> Never {
    Reaper.requireStandardStreams()
    signal(SIGPIPE, SIG_IGN)  // a closed stdout is EPIPE, which `out` turns into a clean exit
    let options = Reaper.commandLine(DemoOptions.command) {
        () throws(UsageError) in
        try DemoOptions.parse(Array(CommandLine.arguments.dropFirst()))
    }
    let (speed, raw, keep) = (options.speed, options.raw, options.keep)

    guard let phoneURL = ChildProcess.locate("phone"), let watchURL = ChildProcess.locate("watch") else {
        fail("cannot find the phone and watch executables next to this one; run `swift build` first")
    }
    guard let zone = TimeZone(identifier: "America/New_York") else {
        fail("this system has no America/New_York time zone (install tzdata)")
    }
    let narrator = Narrator(zone: zone, raw: raw)

    // Every way out (SIGINT, SIGTERM, SIGHUP, a closed stdout, the end, a failure) stops phone
    // and watch and removes the temp dir (unless --keep); SIGKILL leaves the children to their
    // parent-death signal.
    Reaper.shared.installSignalHandlers(program: "sleeptap-demo")
    let dir: String
    do {
        dir = try Reaper.shared.makeTemporaryDirectory(prefix: "sleeptap-demo", removeOnExit: !keep)
    } catch {
        fail("\(error)")
    }
    if keep { Reaper.shared.noteKept(directory: dir) }  // Ctrl-C then says where it is, too
    let endpoint = "ipc://\(dir)/phone.sock"
    let schedulePath = "\(dir)/schedule.json"
    let schedule = """
        {"schemaVersion": 1, "timeZone": "America/New_York",
         "wake": {"monday": "06:30", "tuesday": "06:30", "wednesday": "06:30", "thursday": "06:30",
                  "friday": "06:30", "saturday": "06:30", "sunday": "06:30"}}
        """
    guard FileManager.default.createFile(atPath: schedulePath, contents: Data(schedule.utf8)) else {
        fail("cannot write \(schedulePath)")
    }

    // Virtual time is Thu Mar 6 12:00 EST now, and runs on at `speed` in both processes.
    let anchor = String(format: "%.3f", Date().timeIntervalSince1970)
    let clockFlags = [
        "--clock-start", "2025-03-06T17:00:00Z", "--clock-speed", String(speed), "--clock-anchor", anchor,
    ]
    let wait = 20.0 + 10 * 86_400 / speed
    let phoneArguments =
        ["--endpoint", endpoint, "--state-dir", "\(dir)/phone", "--schedule", schedulePath] + clockFlags

    func expect(
        _ child: ChildProcess, _ event: EventName, from: Int = 0, where predicate: (ChildEvent) -> Bool = { _ in true }
    )
        -> (event: ChildEvent, index: Int)
    {
        guard let found = child.waitFor(event, from: from, timeout: wait, where: predicate) else {
            let stderr = child.standardError
            fail(
                "no \(event) from \(child.name) within \(Int(wait)) s\(stderr.isEmpty ? "" : "; its stderr:\n\(stderr)")",
                kept: keep ? dir : nil)
        }
        return found
    }
    let narratePhone: @Sendable (ChildEvent) -> Void = { narrator.phone($0) }
    let narrateWatch: @Sendable (ChildEvent) -> Void = { narrator.watch($0) }
    func spawn(_ name: String, _ url: URL, _ arguments: [String]) -> ChildProcess {
        do {
            return try ChildProcess(
                name: name, executable: url, arguments: arguments,
                onEvent: name == "phone" ? narratePhone : narrateWatch)
        } catch {
            fail("cannot start \(name): \(error)", kept: keep ? dir : nil)
        }
    }

    out("SleepTap demo: phone and watch as two processes over \(endpoint)")
    out("virtual time from \(narrator.local("2025-03-06T17:00:00Z")), \(Int(speed)) virtual seconds per wall second")
    out("\n== Part 1, the bug: the refresh handler is registered too late (SwiftUI .backgroundTask)\n")
    let buggy = spawn("phone", phoneURL, phoneArguments + ["--registration", "late-silent"])
    let watch = spawn(
        "watch", watchURL,
        [
            "--endpoint", endpoint, "--state-dir", "\(dir)/watch", "--time-zone", "America/New_York",
            "--bed-at", "22:30", "--manual-wake", "06:30",
        ] + clockFlags)
    let fallback = expect(watch, .fallbackManualEntry)
    let manual = expect(watch, .manualWakeTime, from: fallback.index)
    let nightsCovered = watch.events[..<fallback.index].filter { $0.name == .bedWakeTime }.count
    let warnedFirst = watch.events[..<fallback.index].contains { $0.name == .coverageLow }
    narrator.say("user", "opens the phone app once")
    buggy.send(line: "open")
    let refilled = expect(watch, .batchApplied, from: manual.index)
    let dropped = buggy.events.filter { $0.name == .osLaunchDropped }.count
    let enteredBuggy = buggy.events.filter { $0.name == .handlerEntered }.count
    buggy.stop()

    out("\n== Part 2, the fix: the same app registers in didFinishLaunching (AppDelegate)\n")
    let fixed = spawn("phone", phoneURL, phoneArguments + ["--registration", "early"])
    // Seven more nights with the fixed phone.
    var index = refilled.index
    for _ in 0..<7 {
        index = expect(watch, .bedWakeTime, from: index + 1).index
    }
    let fallbacksAfterFix = watch.events[refilled.index...].filter { $0.name == .fallbackManualEntry }.count
    let enteredFixed = fixed.events.filter { $0.name == .handlerEntered }.count
    out("")
    out("Summary")
    out("  bug: \(enteredBuggy) handler.entered, \(dropped) OS launch(es) that never reached the handler;")
    out(
        "       the \(nightsCovered)-night cache hid it\(warnedFirst ? " (the watch warned first)" : ""), "
            + "night \(nightsCovered + 1) asked for manual entry")
    out("  fix: \(enteredFixed) background runs in 7 nights, \(fallbacksAfterFix) manual entries")
    guard enteredBuggy == 0, nightsCovered == 7, warnedFirst, fallbacksAfterFix == 0, enteredFixed > 0 else {
        fail("the story did not play out as expected (see the summary)", kept: keep ? dir : nil)
    }
    Reaper.shared.finish(.ok) {
        if keep { out("\nstate and sockets kept in \(dir)") }
    }
}

runDemo()
