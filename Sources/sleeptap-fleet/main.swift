// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCalibration
import SleepTapCommandLine
import SleepTapCore
import SleepTapFleet
import SleepTapProcess
import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-fleet: a simulated fleet of devices on the embedded twin, writing run records
// (docs/fleet.md); `--bench` runs the twin's speed workload (docs/performance.md).

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)

/// A line on stdout; a closed stdout ends the run quietly (`Reaper.writeLine`).
func writeOut(_ text: String) {
    Reaper.shared.writeLine(text)
}

/// Bytes on stderr; a closed stderr loses them and nothing else.
func writeErr(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
}

func fail(_ text: String, _ code: ExitCode) -> Never {
    writeErr("sleeptap-fleet: " + text + "\n")
    exit(code.rawValue)
}

let today = LocalDate(Date(), in: FleetOptions.utc)
let command = Reaper.commandLine(FleetCommand.command) { () throws(UsageError) in
    try FleetCommand.parse(
        Array(CommandLine.arguments.dropFirst()), today: today, cores: ProcessInfo.processInfo.activeProcessorCount,
        environment: ProcessInfo.processInfo.environment)
}

/// Seconds since `begin`.
func seconds(since begin: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - begin
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

switch command {
case .bench(let devices, let days, let jobs, let speed):
    let begin = ContinuousClock.now
    let events = await TwinWorkload.runAll(devices: devices, days: days, jobs: jobs, speed: speed)
    let elapsed = seconds(since: begin)
    writeOut(
        "devices \(devices) days \(days) jobs \(jobs) speed \(Int(speed)): \(events) events, "
            + String(format: "%.2f s, %.0f device-days/s", elapsed, Double(devices * days) / elapsed))
case .run(var options, let out, let jobs, let json):
    if let path = options.osModelFile {
        // The model file, read before anything is written: bad input changes nothing.
        do {
            let data = try BoundedFile.read(path, limit: 64 << 20)
            options.osModel = try CalibratedOS(json: data)
            options.osModelDigest = Hex64.string(FNV1a64.hash(Array(data)))
        } catch let failure as BoundedFile.Failure {
            fail("--os-model \(path): \(failure)", .dataError)
        } catch {
            fail("--os-model \(path): \(error)", .dataError)
        }
    }
    // One fleet per directory: another run's records beside this one's would mix in every report.
    do throws(FleetOutput.Refusal) {
        try FleetOutput.claim(root: out, options: options)
    } catch {
        fail("--out \(printable(out)): \(error)", .cantCreate)
    }
    let terminal = isatty(STDERR_FILENO) == 1
    var lastShown = ContinuousClock.now
    let summary: FleetRun.Summary
    do {
        summary = try await FleetRun.run(options, writer: RunRecordWriter(root: out), jobs: jobs) { done, total in
            guard terminal, done == total || ContinuousClock.now - lastShown > .milliseconds(200) else { return }
            lastShown = ContinuousClock.now
            writeErr("\r\(done)/\(total) devices")
            if done == total { writeErr("\n") }
        }
    } catch {
        fail("\(error)", .cantCreate)
    }
    // The model group the iOS devices ran on, or why none.
    let modelEntry = options.osModel?.delay(platform: .ios, appVersion: FleetOptions.appVersion)
    let modelLine: String? = options.osModelFile.map { path in
        guard let entry = modelEntry else {
            return
                "os model: \(path): no iOS group with \(CalibratedOS.minimumSamples) or more answered requests; the built-in draws"
        }
        let bins = entry.delay.byDaysSinceOpen?.count ?? 0
        return "os model: \(path): iOS delays from group \"\(entry.group)\" (n = \(entry.n))"
            + (bins == 0 ? "" : ", by the days since the last open (\(bins) bin\(bins == 1 ? "" : "s") with data)")
    }
    // The iOS opportunity model, said only when it is not the default; on a model's fitted
    // delay neither model draws the wait, nor holds a launch (docs/calibration.md).
    let fitted = modelEntry != nil
    let opportunityLine: String? =
        options.opportunityModel == .usage
        ? nil
        : fitted
            ? "opportunity model: \(options.opportunityModel.rawValue), unused: the iOS devices wait as the os model's "
                + "fitted delay says, whichever opportunity model is given (docs/calibration.md)"
            : "opportunity model: \(options.opportunityModel.rawValue) (iOS's exponential wait after each request, "
                + "whatever the users' opens; docs/scheduler.md)"
    let rate = summary.executionRate.map { String(format: "%.1f %%", $0 * 100) } ?? "n/a (no request)"
    if json {
        var object: [String: Any] = [
            "event": "fleet.summary", "fleetDevices": options.devices, "devices": summary.devices, "days": options.days,
            "start": options.start.description,
            "seed": options.seed, "osSeed": options.osSeedSalt, "shard": "\(options.shardIndex)/\(options.shardCount)",
            "out": out,
            "deviceDays": summary.deviceDays, "records": summary.records, "files": summary.files,
            "submitted": summary.submitted, "submitFailed": summary.submitFailed,
            "requests": summary.submitted + summary.submitFailed, "background": summary.background,
            "backgroundSucceeded": summary.backgroundSucceeded, "dropped": summary.dropped,
            "foreground": summary.foreground, "seconds": summary.seconds,
            "deviceDaysPerSecond": summary.deviceDaysPerSecond,
            // The tz database every simulated device's zone rules came from.
            "tzdata": ZoneDatabase.current.version,
        ]
        object["executionRate"] = summary.executionRate ?? NSNull()
        // The model file as given (as sleeptap-compare's `osModel`), and the group the iOS
        // devices ran on, null when none qualified (the built-in draws).
        if let path = options.osModelFile {
            object["osModel"] = path
            object["osModelGroup"] = modelEntry.map { ["name": $0.group, "n": $0.n] as [String: Any] } ?? NSNull()
        }
        if opportunityLine != nil { object["opportunityModel"] = options.opportunityModel.rawValue }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        writeOut(String(decoding: data, as: UTF8.self))
    } else {
        // "200 devices", or for one shard "shard 1/4: 50 of 200 devices".
        let fleet =
            options.shardCount == 1
            ? "\(summary.devices) devices"
            : "shard \(options.shardIndex)/\(options.shardCount): \(summary.devices) of \(options.devices) devices"
        let osSeed = options.osSeedSalt == 0 ? "" : ", OS seed \(options.osSeedSalt)"
        writeOut(
            """
            fleet: \(fleet) x \(options.days) days from \(options.start), seed \(options.seed)\(osSeed)
              records: \(summary.records) in \(summary.files) files under \(out)/\(RunRecordFile.directory)
              submitted \(summary.submitted), submit failed \(summary.submitFailed), background runs \
            \(summary.background) (\(summary.backgroundSucceeded) succeeded), dropped launches \(summary.dropped), \
            app launches by the user \(summary.foreground) (each device's first launch at the start among them)
              execution rate (successful background runs / requests, submitted or failed): \(rate)
              \(String(format: "%.1f s, %.0f device-days/s", summary.seconds, summary.deviceDaysPerSecond))
              zone rules: \(ZoneDatabase.current)
            """ + (modelLine.map { "\n  " + $0 } ?? "") + (opportunityLine.map { "\n  " + $0 } ?? ""))
    }
}
