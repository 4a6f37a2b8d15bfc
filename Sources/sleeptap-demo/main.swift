import Foundation
import SleepTapCore
import SleepTapProcess

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-demo: the seed-000 story, end to end, as two real processes over an ipc socket in
// accelerated virtual time. The phone sends a 7-day batch, the watch stores and acknowledges it,
// the phone's refresh then stops, the watch uses one cached date per night until none is left,
// falls back to manual entry on the 8th night, and one app open refills the dates.

let usage = """
    usage: sleeptap-demo [--speed N] [--raw] [--keep]

    Runs phone and watch as two processes over ipc in a temp dir, in virtual time starting
    Thu 2025-03-06 12:00 America/New_York (a week that crosses the spring-forward change).

      --speed N   virtual seconds per wall second (default 28800: 8 virtual hours a second)
      --raw       also print every JSON event as it arrives
      --keep      keep the temp dir (state files, sockets) and print its path
      -h, --help  this text

    Exit: 0 when the story played out, 1 when an expected event did not come, 64 bad arguments.
    """

/// Writes a line to stdout at once (unbuffered, so a watching person sees it as it happens).
@Sendable func out(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func runDemo() -> Never {
    var speed = 28_800.0
    var raw = false
    var keep = false
    var arguments = Array(CommandLine.arguments.dropFirst())
    while !arguments.isEmpty {
        let flag = arguments.removeFirst()
        switch flag {
        case "-h", "--help":
            out(usage)
            exit(0)
        case "--raw": raw = true
        case "--keep": keep = true
        case "--speed":
            guard let text = arguments.first, let value = Double(text), value >= 60, value <= 200_000 else {
                FileHandle.standardError.write(Data("sleeptap-demo: --speed needs a number from 60 to 200000\n".utf8))
                exit(64)
            }
            arguments.removeFirst()
            speed = value
        default:
            FileHandle.standardError.write(Data("sleeptap-demo: unknown option \(flag)\n\(usage)\n".utf8))
            exit(64)
        }
    }

    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("sleeptap-demo: \(message)\n".utf8))
        exit(1)
    }

    guard let phoneURL = ChildProcess.locate("phone"), let watchURL = ChildProcess.locate("watch") else {
        fail("cannot find the phone and watch executables next to this one; run `swift build` first")
    }

    let zone = TimeZone(identifier: "America/New_York")!
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = zone
    formatter.dateFormat = "EEE MMM d HH:mm zzz"
    func local(_ iso: String?) -> String {
        guard let iso, let date = try? Date(iso, strategy: .iso8601) else { return "?" }
        return formatter.string(from: date)
    }

    let template = FileManager.default.temporaryDirectory.appendingPathComponent("sleeptap-demo-XXXXXX").path
    var templateBytes = Array(template.utf8CString)
    guard let madeDir = mkdtemp(&templateBytes) else { fail("cannot create a temp dir") }
    let dir = String(cString: madeDir)
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

    let clockStart = "2025-03-06T17:00:00Z"
    let anchor = String(format: "%.3f", Date().timeIntervalSince1970)
    let clockFlags = ["--clock-start", clockStart, "--clock-speed", String(speed), "--clock-anchor", anchor]
    let wait = 15.0 + 10 * 86_400 / speed

    func say(_ who: String, _ text: String) {
        out("\(who.padding(toLength: 6, withPad: " ", startingAt: 0)) | \(text)")
    }
    let printRaw: @Sendable (ChildEvent) -> Void = { event in out("         \(event.line)") }
    let rawPrinter: (@Sendable (ChildEvent) -> Void)? = raw ? printRaw : nil

    out("SleepTap demo: phone and watch as two processes over \(endpoint)")
    out("virtual time starts \(local(clockStart)), \(Int(speed)) virtual seconds per wall second\n")

    var children: [ChildProcess] = []
    func cleanUp() {
        for child in children { child.stop() }
        if keep {
            out("\nstate and sockets kept in \(dir)")
        } else {
            try? FileManager.default.removeItem(atPath: dir)
        }
    }
    func expect(
        _ child: ChildProcess, _ event: String, from: Int = 0, where predicate: (ChildEvent) -> Bool = { _ in true }
    )
        -> (event: ChildEvent, index: Int)
    {
        guard let found = child.waitFor(event, from: from, timeout: wait, where: predicate) else {
            let stderr = child.standardError
            cleanUp()
            fail(
                "no \(event) from \(child.name) within \(Int(wait)) s\(stderr.isEmpty ? "" : "; its stderr:\n\(stderr)")"
            )
        }
        return found
    }

    do {
        let phone = try ChildProcess(
            name: "phone", executable: phoneURL,
            arguments: ["--endpoint", endpoint, "--state-dir", "\(dir)/phone", "--schedule", schedulePath] + clockFlags,
            onEvent: rawPrinter)
        children.append(phone)
        say("phone", "the user opens the app: foreground refresh")
        let generated = expect(phone, "batch.generated").event
        say(
            "phone",
            "batch #\(generated.int("seq") ?? 0): \(generated.int("count") ?? 0) wake-ups, "
                + "\(local(generated.string("first"))) ... \(local(generated.string("last")))")
        say("", "(06:30 every day; the clocks spring forward on Sun Mar 9, and each date keeps 06:30)")

        let watch = try ChildProcess(
            name: "watch", executable: watchURL,
            arguments: [
                "--endpoint", endpoint, "--state-dir", "\(dir)/watch", "--time-zone", "America/New_York",
                "--bed-at", "22:30", "--manual-wake", "06:30",
            ] + clockFlags,
            onEvent: rawPrinter)
        children.append(watch)
        let applied = expect(watch, "batch.applied").event
        say(
            "watch",
            "stored batch #\(applied.int("seq") ?? 0) on disk (\(applied.int("count") ?? 0) dates, "
                + "through \(local(applied.string("coverageEnd")))), then acknowledged it")
        _ = expect(phone, "ack.received")
        say("phone", "ack received: the watch holds batch #\(applied.int("seq") ?? 0)")

        phone.stop()
        say("phone", "now background refresh silently stops (the phone process is stopped): no more batches")
        out("")

        var from = 0
        var night = 0
        while true {
            let (tap, index) = expect(watch, "bed.wake_time", from: from) { _ in true }
            _ = tap
            // Take whichever comes first in order: a cached wake time or the fallback.
            let events = watch.events
            let fallbackIndex = events[from...].firstIndex { $0.name == "fallback.manual_entry" }
            if let fallbackIndex, fallbackIndex < index {
                from = fallbackIndex
                break
            }
            night += 1
            say(
                "watch",
                "night \(night), \(local(tap.string("time"))): bed -> alarm \(local(tap.string("wakeTime")))"
                    + " (\(tap.int("remaining") ?? 0) more cached)")
            from = index + 1
            if tap.int("remaining") == 0 {
                let fallback = expect(watch, "fallback.manual_entry", from: from)
                from = fallback.index
                break
            }
        }
        let fallback = watch.events[from]
        say(
            "watch",
            "night \(night + 1), \(local(fallback.string("time"))): bed -> NO cached date covers the coming wake-up")
        say("watch", "asks for the wake time by hand (\(fallback.string("reason") ?? ""))")
        let manual = expect(watch, "manual.wake_time", from: from).event
        say("user", "types 06:30 -> alarm \(local(manual.string("wakeTime")))")
        out("")

        let reopened = try ChildProcess(
            name: "phone", executable: phoneURL,
            arguments: ["--endpoint", endpoint, "--state-dir", "\(dir)/phone", "--schedule", schedulePath] + clockFlags,
            onEvent: rawPrinter)
        children.append(reopened)
        let refill = expect(reopened, "batch.generated").event
        say(
            "phone",
            "the user opens the app once: batch #\(refill.int("seq") ?? 0), \(refill.int("count") ?? 0) wake-ups from \(local(refill.string("first")))"
        )
        let reapplied = expect(watch, "batch.applied", from: from) { $0.int("seq") == refill.int("seq") }.event
        _ = expect(reopened, "ack.received") { $0.int("seq") == refill.int("seq") }
        say(
            "watch",
            "stored and acknowledged batch #\(reapplied.int("seq") ?? 0): dates refilled through \(local(reapplied.string("coverageEnd")))"
        )
        out("\nThe \(night)-night cache hid the stopped refresh; night \(night + 1) asked for manual entry.")
        cleanUp()
    } catch {
        cleanUp()
        fail("cannot start a process: \(error)")
    }
    exit(0)
}

runDemo()
