// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapFleet

// sleeptap-fleet: simulated devices on the embedded twin. For now only the speed measurement:
// `sleeptap-fleet --bench --devices N --days D [--jobs J] [--speed S]` (docs/performance.md).

let usage = """
    usage: sleeptap-fleet --bench [--devices N] [--days D] [--jobs J] [--speed S]

    Runs the twin's speed workload (docs/performance.md, "Twin speed"): N devices (default 100)
    for D days (default 28), J at a time (default: the number of cores; 1 runs them on the main
    thread), at S virtual seconds per wall second (default 3600), and prints device-days per
    second. Writes no files.
    """
let arguments = Array(CommandLine.arguments.dropFirst())
switch Parsed<Int>.informationRequest(in: arguments) {
case .help:
    print(usage)
    exit(ExitCode.ok.rawValue)
case .version:
    print("sleeptap-fleet \(SleepTapVersion.string)")
    exit(ExitCode.ok.rawValue)
default: break
}
var reader = ArgumentReader(arguments)
var bench = false
var devices = 100
var days = 28
var jobs = ProcessInfo.processInfo.activeProcessorCount
var speed = 3_600.0
do {
    while let flag = try reader.nextFlag() {
        switch flag {
        case "--bench": bench = true
        case "--devices": devices = try reader.integer(flag, in: 1...10_000_000)
        case "--days": days = try reader.integer(flag, in: 1...3_660)
        case "--jobs": jobs = try reader.integer(flag, in: 1...1_024)
        case "--speed": speed = try reader.seconds(flag, in: 1...1e9)
        default: throw ArgumentReader.unknown(flag)
        }
    }
    guard bench else { throw UsageError("--bench is required (the fleet itself is not built yet)") }
} catch {
    FileHandle.standardError.write(Data("sleeptap-fleet: \(error) (see sleeptap-fleet --help)\n".utf8))
    exit(ExitCode.usage.rawValue)
}

func runAll(devices: Int, days: Int, jobs: Int, speed: Double) async -> Int {
    await withTaskGroup(of: Int.self) { group in
        var next = 0
        var total = 0
        for _ in 0..<min(jobs, devices) {
            let index = next
            group.addTask { TwinWorkload.run(index: index, days: days, speed: speed) }
            next += 1
        }
        while let count = await group.next() {
            total += count
            if next < devices {
                let index = next
                group.addTask { TwinWorkload.run(index: index, days: days, speed: speed) }
                next += 1
            }
        }
        return total
    }
}
let begin = ContinuousClock.now
let entries: Int
if jobs == 1 {
    // One device after the other on this thread (no worker threads: valgrind can run it).
    entries = (0..<devices).reduce(0) { $0 + TwinWorkload.run(index: $1, days: days, speed: speed) }
} else {
    entries = await runAll(devices: devices, days: days, jobs: jobs, speed: speed)
}
let elapsed = ContinuousClock.now - begin
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let rate = Double(devices * days) / seconds
print(
    "devices \(devices) days \(days) jobs \(jobs) speed \(Int(speed)): \(entries) events, "
        + String(format: "%.2f s, %.0f device-days/s", seconds, rate))
