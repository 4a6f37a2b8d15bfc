import Foundation
import SleepTapCore
import SleepTapRuntime

// Thin executable: parse arguments, run the watch runtime, exit with its status.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "keygen" {
    exit(KeyGeneration.main(role: .watch, arguments: Array(arguments.dropFirst())))
}
do {
    switch try CommandLineParser.parseWatch(arguments) {
    case .help:
        print(CommandLineParser.watchUsage)
        exit(ExitStatus.ok)
    case .version:
        print("watch \(SleepTapVersion.string)")
        exit(ExitStatus.ok)
    case .run(let options):
        exit(WatchRuntime(options: options).run())
    }
} catch {
    diagnose("watch", "\(error)\n(see watch --help)")
    exit(ExitStatus.usage)
}
