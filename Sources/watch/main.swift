// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapRuntime

// Thin executable: parse arguments, run the watch runtime, exit with its status.
// Before anything opens a file: a closed stdin, stdout or stderr is never reused by one.
if let problem = StandardStreams.secure() {
    diagnose("watch", problem)
    exit(ExitCode.ioError.rawValue)
}
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "keygen" {
    exit(KeyGeneration.main(role: .watch, arguments: Array(arguments.dropFirst())).rawValue)
}
// First, before any other thread exists: SIGINT, SIGTERM and SIGHUP sent during start-up wait,
// pending, for the signal trap (every thread created later inherits the blocked mask).
SignalTrap.holdStopSignals()
do {
    switch try CommandLineParser.parseWatch(arguments) {
    case .help:
        exit(StandardStreams.print(CommandLineParser.watchCommand.help, program: "watch").rawValue)
    case .version:
        // The database --tzdata names (either form), or the machine's; a bad DIR is an error.
        let zones = try zoneDatabaseFlag(in: arguments)
        exit(StandardStreams.print(SleepTapVersion.line("watch", zones: zones ?? .current), program: "watch").rawValue)
    case .run(let options):
        if let zones = options.zoneDatabase {
            ZoneDatabase.use(zones)
        } else if let problem = ZoneDatabase.systemDirectoryProblem() {
            throw UsageError(problem)
        }
        // A TZ that names no zone of the database ends the start (never Foundation's rules, or
        // UTC, in its place), unless --time-zone is given: then the machine's zone is not used.
        if options.timeZone == nil { _ = try MachineZone.named(in: ProcessInfo.processInfo.environment) }
        exit(WatchRuntime(options: options).run().rawValue)
    }
} catch {
    diagnose("watch", "\(error)\n(see \(invokedName("watch")) --help)")
    exit(ExitCode.usage.rawValue)
}
