import Foundation
import SleepTapCore
import SleepTapRuntime

// Thin executable: parse arguments, run the watch runtime, exit with its status.
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
        print(CommandLineParser.watchUsage)
        exit(ExitCode.ok.rawValue)
    case .version:
        print("watch \(SleepTapVersion.string)")
        exit(ExitCode.ok.rawValue)
    case .run(let options):
        exit(WatchRuntime(options: options).run().rawValue)
    }
} catch {
    diagnose("watch", "\(error)\n(see watch --help)")
    exit(ExitCode.usage.rawValue)
}
