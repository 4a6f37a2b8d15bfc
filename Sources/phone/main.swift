// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapRuntime

// Thin executable: parse arguments, run the phone runtime, exit with its status.
// Before anything opens a file: a closed stdin, stdout or stderr is never reused by one.
if let problem = StandardStreams.secure() {
    diagnose("phone", problem)
    exit(ExitCode.ioError.rawValue)
}
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "keygen" {
    exit(KeyGeneration.main(role: .phone, arguments: Array(arguments.dropFirst())).rawValue)
}
// First, before any other thread exists: SIGINT, SIGTERM and SIGHUP sent during start-up wait,
// pending, for the signal trap (every thread created later inherits the blocked mask).
SignalTrap.holdStopSignals()
do {
    switch try CommandLineParser.parsePhone(arguments) {
    case .help:
        exit(StandardStreams.print(CommandLineParser.phoneCommand.help, program: "phone").rawValue)
    case .version:
        // The database --tzdata names (either form), or the machine's; a bad DIR is an error.
        let zones = try zoneDatabaseFlag(in: arguments)
        exit(StandardStreams.print(SleepTapVersion.line("phone", zones: zones ?? .current), program: "phone").rawValue)
    case .run(let options):
        if let zones = options.zoneDatabase {
            ZoneDatabase.use(zones)
        } else if let problem = ZoneDatabase.systemDirectoryProblem() {
            throw UsageError(problem)
        }
        // A TZ that names no zone of the database ends the start (never Foundation's rules, or
        // UTC, in its place), unless --time-zone is given: then the machine's zone is not used.
        if options.timeZone == nil { _ = try MachineZone.named(in: ProcessInfo.processInfo.environment) }
        let code = PhoneRuntime(options: options).run()
        // _exit(2), not exit(3): a weather fetch may still be running on another thread (the
        // driver never waits for one), and exit(3)'s atexit teardown of FoundationNetworking
        // races it (a SIGSEGV one stop in a few). Every line was written with write(2), unbuffered,
        // and the state files are fsync'd, so nothing is lost.
        _exit(code.rawValue)
    }
} catch {
    diagnose("phone", "\(error)\n(see \(invokedName("phone")) --help)")
    exit(ExitCode.usage.rawValue)
}
