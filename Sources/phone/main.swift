import Foundation
import SleepTapCore
import SleepTapRuntime

// Thin executable: parse arguments, run the phone runtime, exit with its status.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "pair" {
    // phone pair --dir DIR: CURVE key pairs for the phone and its watch.
    switch CommandLineParser.informationRequest(in: arguments.dropFirst()) as Parsed<String>? {
    case .help:
        print("usage: phone pair --dir DIR\n\nWrites the CURVE key pairs of the phone and its watch into DIR.")
        exit(ExitStatus.ok)
    case .version:
        print("phone \(SleepTapVersion.string)")
        exit(ExitStatus.ok)
    case .run, nil: break
    }
    guard arguments.count == 3, arguments[1] == "--dir", !arguments[2].isEmpty else {
        diagnose("phone", "usage: phone pair --dir DIR")
        exit(ExitStatus.usage)
    }
    do {
        let (phone, watch) = try Pairing.generate(into: arguments[2])
        print("paired: phone \(phone.publicKey), watch \(watch.publicKey)")
        print(
            "phone: --keys \(arguments[2])   watch: --keys \(arguments[2])  (copy watch.key and phone.pub to the watch)"
        )
        exit(ExitStatus.ok)
    } catch {
        diagnose("phone", "pair: \(error)")
        exit(ExitStatus.cannotCreate)
    }
}
do {
    switch try CommandLineParser.parsePhone(arguments) {
    case .help:
        print(CommandLineParser.phoneUsage)
        exit(ExitStatus.ok)
    case .version:
        print("phone \(SleepTapVersion.string)")
        exit(ExitStatus.ok)
    case .run(let options):
        exit(PhoneRuntime(options: options).run())
    }
} catch {
    diagnose("phone", "\(error)\n(see phone --help)")
    exit(ExitStatus.usage)
}
