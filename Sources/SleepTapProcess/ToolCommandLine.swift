// SPDX-License-Identifier: Apache-2.0
import Foundation
package import SleepTapCommandLine
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

extension Reaper {
    /// The first thing a SleepTap tool's `main` does with its command line: `parse` it, and
    /// answer `--help` (the text generated from `command`'s declarations on stdout, exit 0) and
    /// `--version`
    /// (`"<versionName> <version>"` on stdout, exit 0) itself. A bad command line ends the
    /// process with `"<program>: <what is wrong> (see <program> --help)"` on stderr and exit 64
    /// (`EX_USAGE`, sysexits(3)), and so does a `TZDIR` that cannot be a tz database
    /// (`ZoneDatabase.systemDirectoryProblem`). Output goes through `writeLine`, so a closed stdout ends the
    /// tool quietly instead of crashing it.
    ///
    /// - Parameters:
    ///   - command: the tool's declared options and texts; its `program` (e.g.
    ///     `"sleeptap-soak exhaustion"`) is the name errors start with.
    ///   - versionName: the name `--version` prints; `command.program` when nil.
    ///   - parse: the tool's own parser.
    /// - Returns: the options to run with; never returns for help, version or a usage error.
    package static func commandLine<Options: Sendable>(
        _ command: CommandSpec, versionName: String? = nil, parse: () throws(UsageError) -> Parsed<Options>
    ) -> Options {
        let program = command.program
        do {
            switch try parse() {
            case .help:
                shared.writeLine(command.help)
                exit(ExitCode.ok.rawValue)
            case .version:
                shared.writeLine(SleepTapVersion.line(versionName ?? program))
                exit(ExitCode.ok.rawValue)
            case .run(let options):
                // A TZDIR that cannot be a tz database is said before anything runs (the tools
                // read zone rules through their twins and oracles; sleeptap-report reads none but
                // judges the same environment the same way).
                if let problem = ZoneDatabase.systemDirectoryProblem() {
                    shared.writeError("\(program): \(problem)")
                    exit(ExitCode.usage.rawValue)
                }
                return options
            }
        } catch {
            shared.writeError("\(program): \(error.message) (see \(program) --help)")
            exit(ExitCode.usage.rawValue)
        }
    }
}
