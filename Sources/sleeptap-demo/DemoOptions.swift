// SPDX-License-Identifier: Apache-2.0

import SleepTapCommandLine

/// The demo's command line, parsed.
struct DemoOptions: Equatable, Sendable {
    /// The speeds `--speed` accepts, in virtual seconds per wall second: slower than 600 makes
    /// the week take longer than a person waits; faster than 200000 outruns the processes' start-up.
    static let speeds: ClosedRange<Double> = 600...200_000

    /// Virtual seconds per wall second (`--speed`).
    var speed = 43_200.0
    /// Also print every JSON event as it arrives (`--raw`).
    var raw = false
    /// Keep the temp dir and print its path (`--keep`).
    var keep = false

    /// The demo's options and texts; `--help` is generated from them.
    static let command = CommandSpec(
        program: "sleeptap-demo",
        summary: """
            Runs phone and watch as two processes over ipc in a temp dir, in virtual time starting
            Thu 2025-03-06 12:00 America/New_York (a week that crosses the spring-forward change):
            first with the handler registered too late (the bug), then registered early (the fix).
            """,
        sections: [
            .init(
                nil,
                [
                    OptionSpec(
                        "--speed", value: "N", example: "86400",
                        help: "virtual seconds per wall second, 600 to 200000 (default 43200: 12 h a second)"),
                    OptionSpec("--raw", help: "also print every JSON event as it arrives"),
                    OptionSpec("--keep", help: "keep the temp dir (state files, sockets) and print its path"),
                    .helpOption(), .versionOption(),
                ])
        ],
        footer: """
            Ctrl-C, SIGTERM, SIGHUP or a closed stdout (`| head`) stop phone and watch and remove the
            temp dir; phone and watch also stop by themselves if this process is killed (SIGKILL).

            Exit: 0 when the story played out or stdout was closed, 1 when an expected event did not
            come, 64 bad arguments, 74 stdout closed (>&-) or not writable (> /dev/full), 128 + N
            on signal N (SIGINT 130, SIGTERM 143, SIGHUP 129).
            """)

    /// Parses the demo's arguments (without the program name); `-h`, `--help` and `--version`
    /// win wherever they stand.
    /// - Throws: `UsageError` naming the option and, for a bad value, the value.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<DemoOptions> {
        if let request = Parsed<DemoOptions>.informationRequest(in: arguments) { return request }
        var options = DemoOptions()
        var reader = ArgumentReader(arguments, command: command)
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--raw": options.raw = true
            case "--keep": options.keep = true
            case "--speed":
                let text: String
                do { text = try reader.value(flag) } catch {
                    throw UsageError("\(error.message): a number from 600 to 200000")
                }
                guard let speed = ArgumentReader.decimal(text), speeds.contains(speed) else {
                    throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": not a number from 600 to 200000")
                }
                options.speed = speed
            default: throw ArgumentReader.unknown(flag)
            }
        }
        return .run(options)
    }
}
