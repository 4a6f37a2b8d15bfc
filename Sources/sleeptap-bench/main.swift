// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapProcess

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-bench: SleepTap's speed as ratios to its floor (plain C on libzmq and the disk),
// measured in the same run, interleaved round by round (BenchOptions.command).

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)
let options = Reaper.commandLine(BenchOptions.command) { () throws(UsageError) in
    try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
}

Reaper.shared.installSignalHandlers(program: "sleeptap-bench")
let loadAtStart = Machine.loadAverage()
let bench: Bench
do {
    bench = try Bench(options: options)
    try bench.runAll()
} catch {
    Reaper.shared.finish(.software) { Reaper.shared.writeError("sleeptap-bench: \(error)") }
}

let command = (["sleeptap-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
let report = BenchReport(
    machine: bench.machine(loadAtStart: loadAtStart), mode: options.mode.rawValue, command: command,
    cases: bench.cases, measurements: bench.measurements)
if let path = options.jsonPath {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    do {
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    } catch {
        Reaper.shared.finish(.cantCreate) { Reaper.shared.writeError("sleeptap-bench: cannot write \(path): \(error)") }
    }
}
Reaper.shared.finish(.ok) {
    let machine = report.machine
    Reaper.shared.writeLine(
        "sleeptap-bench (\(options.mode.rawValue)): \(machine.cpu), \(machine.cores) cores, \(machine.kernel), "
            + "libzmq \(machine.libzmq), state on \(machine.stateFileSystem), tz \(machine.tzdata); load \(Format.number(machine.loadAtStart)) "
            + "at start, \(Format.number(machine.loadAtEnd)) at end")
    Reaper.shared.writeLine("")
    for line in Format.measurements(report.measurements) { Reaper.shared.writeLine(line) }
    Reaper.shared.writeLine("")
    for line in Format.cases(report.cases) { Reaper.shared.writeLine(line) }
}
