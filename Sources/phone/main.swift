import Foundation
import SleepTapRuntime

// Thin executable: parse arguments, run the phone runtime, exit with its status.
do {
    switch try CommandLineParser.parsePhone(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        print(CommandLineParser.phoneUsage)
        exit(ExitStatus.ok)
    case .run(let options):
        exit(PhoneRuntime(options: options).run())
    }
} catch {
    diagnose("phone", "\(error)\n(see phone --help)")
    exit(ExitStatus.usage)
}
