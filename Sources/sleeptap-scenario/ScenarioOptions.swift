import SleepTapCommandLine

/// `sleeptap-scenario`'s command line.
struct ScenarioOptions: Equatable, Sendable {
    var files: [String] = []
    var json = false

    static let usage = """
        usage: sleeptap-scenario FILE... --twin [--json]

        Runs each scenario file (docs/scenarios.md) in the embedded twin: the real phone and
        watch cores in one process on virtual time, built from the scenario's phone and watch
        flags by the executables' own parsers. Prints, per scenario, a night-by-night table
        (local date, tap time, outcome: cached wake-up, warned or manual entry, nights left,
        the phone's background runs since the previous night) and each expectation as PASS or FAIL
        with the observed value.

        options:
          --twin      run in the embedded twin (required for now)
          --processes real phone and watch processes over ipc: not implemented yet (exit 64)
          --both      the twin and the processes, compared: not implemented yet (exit 64)
          --json      print one JSON object {"pass", "scenarios": [...]} instead of the tables
          --version   print the version and exit
          -h, --help  print this help and exit

        exit status: 0 every expectation holds; 1 an expectation fails; 64 a bad command line;
        65 a bad scenario file (the message names the file, the field and the value).
        """

    /// Parses the arguments (without the program name); `-h`, `--help` and `--version` win
    /// wherever they stand.
    /// - Throws: `UsageError` naming the option or the missing part.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<ScenarioOptions> {
        if let request = Parsed<ScenarioOptions>.informationRequest(in: arguments) { return request }
        var options = ScenarioOptions()
        var twin = false
        // No option takes a value: every argument that is not an option is a FILE (the same file
        // may be named twice, and runs twice); the reader checks the options, each given once.
        options.files = arguments.filter { !$0.hasPrefix("-") }
        var reader = ArgumentReader(arguments.filter { $0.hasPrefix("-") })
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--twin": twin = true
            case "--json": options.json = true
            case "--processes", "--both":
                throw UsageError("\(flag) is not implemented yet; use --twin")
            default: throw ArgumentReader.unknown(flag)
            }
        }
        guard !options.files.isEmpty else { throw UsageError("give at least one scenario FILE") }
        guard twin else { throw UsageError("--twin is required (--processes and --both are not implemented yet)") }
        return .run(options)
    }
}
