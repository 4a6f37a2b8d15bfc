// SPDX-License-Identifier: Apache-2.0

import SleepTapCommandLine

/// `sleeptap-scenario`'s command line.
struct ScenarioOptions: Equatable, Sendable {
    /// Where the scenarios run.
    enum Mode: String, Equatable, Sendable {
        case twin, processes, both
    }

    var files: [String] = []
    var mode = Mode.both
    /// Virtual seconds per wall second (`--speed`).
    var speed = 172_800.0
    var json = false
    /// `--svg FILE`: the coverage chart (one file per scenario; `svgPaths`).
    var svg: String?

    /// The runner's options and texts; `--help` is generated from them.
    static let command = CommandSpec(
        program: "sleeptap-scenario", operands: "FILE...", sampleOperands: ["a.json"],
        summary: """
            Runs each scenario file (docs/scenarios.md): in the embedded twin (the real phone and
            watch cores in one process on virtual time, built from the scenario's flags by the
            executables' own parsers), as the real phone and watch processes over ipc in a temp dir
            in accelerated virtual time, or both, compared night by night. Prints, per scenario and
            mode, a night-by-night table (local date, tap time, outcome: cached wake-up, warned or
            manual entry, nights left, the phone's background runs since the previous night and its
            staleness) and each expectation as PASS or FAIL with the observed value.
            """,
        sections: [
            .init(
                "options:",
                [
                    OptionSpec("--twin", help: "the embedded twin only"),
                    OptionSpec(
                        "--processes", synopsis: .orPrevious,
                        help: "the real phone and watch only (found next to this binary)"),
                    OptionSpec(
                        "--both", synopsis: .orPrevious,
                        help: """
                            the twin, then the processes; the processes' nights must equal the twin's on the
                            processes' own instants (default)
                            """),
                    OptionSpec(
                        "--speed", value: "N", example: "3600",
                        help: """
                            virtual seconds per wall second, 1 to 10000000 (default 172800: 2 virtual days per
                            wall second, a 3-week scenario in about 11 s as processes)
                            """),
                    OptionSpec(
                        "--json",
                        help: """
                            print one JSON object {"pass", "modes", "speed", "tzdata", "scenarios": [...]}
                            instead
                            """),
                    OptionSpec(
                        "--svg", value: "FILE", example: "chart.svg",
                        help: """
                            write a coverage chart (nights of cached dates left over time, with fallbacks,
                            warnings, opens and background runs) as SVG to FILE; with several scenarios, one
                            file each: FILE with -NAME before its extension (NAME: the scenario file's name
                            without .json)
                            """),
                    .versionOption("print the version and exit"), .helpOption("print this help and exit"),
                ])
        ],
        footer: """
            exit status: 0 every expectation holds (and twin and processes agree); 1 an expectation
            fails or they disagree; 64 a bad command line; 65 a bad scenario file (the message names
            the file, the field and the value); 69 phone or watch not found; 70 a process that did
            not start or stop; 73 a temp dir or the SVG file cannot be created.
            """)

    /// Parses the arguments (without the program name); `-h`, `--help` and `--version` win
    /// wherever they stand.
    /// - Throws: `UsageError` naming the option or the missing part.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<ScenarioOptions> {
        if let request = Parsed<ScenarioOptions>.informationRequest(in: arguments) { return request }
        var options = ScenarioOptions()
        // Every argument that is not an option (nor the value of one that takes a value: --speed,
        // --svg) is a FILE (the
        // same file may be named twice, and runs twice); the reader checks the options, each given
        // once.
        var flags: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-"), argument != "-" else {
                options.files.append(argument)
                continue
            }
            flags.append(argument)
            if command.option(named: argument)?.valueName != nil, index < arguments.count,
                !arguments[index].hasPrefix("--")
            {
                flags.append(arguments[index])
                index += 1
            }
        }
        var reader = ArgumentReader(flags, command: command)
        var modes: [Mode] = []
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--twin": modes.append(.twin)
            case "--processes": modes.append(.processes)
            case "--both": modes.append(.both)
            case "--json": options.json = true
            case "--speed":
                let text = try reader.value(flag)
                guard let speed = ArgumentReader.decimal(text), speed >= 1, speed <= 10_000_000 else {
                    throw UsageError(
                        "--speed \"\(ArgumentReader.clip(text))\": expected virtual seconds per wall second from 1 to 10000000"
                    )
                }
                options.speed = speed
            case "--svg": options.svg = try reader.nonEmpty(flag)
            default: throw ArgumentReader.unknown(flag)
            }
        }
        guard modes.count <= 1 else {
            throw UsageError(
                "give one of --twin, --processes and --both (found \(modes.map { "--\($0)" }.joined(separator: " ")))")
        }
        options.mode = modes.first ?? .both
        guard !options.files.isEmpty else { throw UsageError("give at least one scenario FILE") }
        return .run(options)
    }

    /// Where the chart of each scenario goes: `svg` itself for one scenario; for several, `svg`
    /// with `-NAME` before its extension (NAME: the scenario file's name without `.json`, and
    /// `-2`, `-3`, ... after it for a file named again).
    func svgPaths() -> [String] {
        guard let svg else { return [] }
        guard files.count > 1 else { return [svg] }
        let slash = svg.lastIndex(of: "/").map { svg.index(after: $0) } ?? svg.startIndex
        let dot = svg[slash...].lastIndex(of: ".") ?? svg.endIndex
        var seen: [String: Int] = [:]
        return files.map { file in
            var name = String(file.split(separator: "/").last ?? Substring(file))
            if name.hasSuffix(".json") { name.removeLast(5) }
            seen[name, default: 0] += 1
            if let count = seen[name], count > 1 { name += "-\(count)" }
            return String(svg[..<dot]) + "-" + name + String(svg[dot...])
        }
    }
}
