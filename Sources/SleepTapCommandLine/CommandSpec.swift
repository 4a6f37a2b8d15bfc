// SPDX-License-Identifier: Apache-2.0

/// One option of a command, declared once: the name its parser accepts, its `--help` line, its
/// place in the usage line, and a valid sample use for the test that every declared option is
/// parsed.
package struct OptionSpec: Sendable, Equatable {
    /// How an option appears in the usage line.
    package enum Synopsis: Sendable, Equatable {
        /// `[--name VALUE]`.
        case optional
        /// `--name VALUE`, without brackets: the command needs it.
        case required
        /// Not in the usage line (`-h`, `--version`).
        case hidden
        /// Inside the previous item's brackets, as an alternative: `[--keys DIR | --insecure]`.
        case orPrevious
        /// Inside the previous item's brackets, given together with it:
        /// `[--clock-start ISO8601 --clock-speed N]`.
        case withPrevious
        /// Inside the previous item's brackets, optional there: `[--bed-at HH:MM [--manual-wake HH:MM]]`.
        case insidePrevious
    }

    /// The long name, e.g. `--endpoint`.
    package var name: String
    /// A short name accepted as well, e.g. `-h`; nil for none.
    package var shortName: String?
    /// The value's placeholder, e.g. `DIR`; nil for a switch, which takes no value.
    package var valueName: String?
    /// The option's description, as one paragraph: the help generator wraps it.
    package var help: String
    /// Its form in the usage line.
    package var synopsis: Synopsis
    /// A valid value, for the test that parses every declared option; nil for a switch.
    package var example: String?
    /// Other arguments a valid use of the option needs alongside it (e.g. `--platform android`),
    /// for the same test.
    package var needs: [String]
    /// A valid use gives only `needs` and the option, without the command's required options
    /// (`sleeptap-fleet --bench`).
    package var alone: Bool

    /// An option named `name`; a switch unless it has a `value` name.
    package init(
        _ name: String, short shortName: String? = nil, value valueName: String? = nil,
        synopsis: Synopsis = .optional, example: String? = nil, needs: [String] = [], alone: Bool = false,
        help: String
    ) {
        self.name = name
        self.shortName = shortName
        self.valueName = valueName
        self.help = help
        self.synopsis = synopsis
        self.example = example
        self.needs = needs
        self.alone = alone
    }

    /// `-h, --help`, which wins over any other argument (`Parsed.informationRequest`).
    package static func helpOption(_ text: String = "this text (wins over any other argument)") -> OptionSpec {
        OptionSpec("--help", short: "-h", synopsis: .hidden, help: text)
    }

    /// `--version`, which prints the tool's name and version.
    package static func versionOption(_ text: String = "print the version") -> OptionSpec {
        OptionSpec("--version", synopsis: .hidden, help: text)
    }

    /// The names the parser accepts: the long one and the short one.
    package var names: [String] { [shortName, name].compactMap { $0 } }

    /// The arguments of a valid use of the option: what it needs, then the option and its sample
    /// value.
    package var sampleArguments: [String] { needs + [name] + (example.map { [$0] } ?? []) }

    /// The option as its help line starts: `-h, --help`, `--state-dir DIR`.
    package var label: String {
        names.joined(separator: ", ") + (valueName.map { " " + $0 } ?? "")
    }

    /// The option as the usage line shows it: `--state-dir DIR`.
    package var usageForm: String { name + (valueName.map { " " + $0 } ?? "") }
}

/// A command's options and texts, declared once: its `--help` is generated from it
/// (`HelpGenerator`) and its parser accepts only the names declared here (`ArgumentReader`).
package struct CommandSpec: Sendable, Equatable {
    /// A group of options, with a paragraph before it (nil for none).
    package struct Section: Sendable, Equatable {
        /// The paragraph printed before the options, wrapped; nil for none.
        package var heading: String?
        /// The section's options, in the order of the help text.
        package var options: [OptionSpec]

        /// A section of `options` after `heading`.
        package init(_ heading: String? = nil, _ options: [OptionSpec]) {
            self.heading = heading
            self.options = options
        }
    }

    /// The name the usage line starts with, e.g. `phone keygen`.
    package var program: String
    /// What comes before the options in the usage line (operands, `FILE...`); empty for none.
    package var operands: String
    /// Valid operands, for the test that parses every declared option.
    package var sampleOperands: [String]
    /// Further forms of the command, each printed on a line of its own under the usage line
    /// (`sleeptap-fleet --bench ...`).
    package var otherUsages: [String]
    /// What the command does: the generator wraps each run of lines that start with a letter, and
    /// keeps indented lines (tables, lists) as written.
    package var summary: String
    /// The options, in the order of the help text.
    package var sections: [Section]
    /// The text after the options, printed as written (tables of stdin commands, exit codes).
    package var footer: String

    /// A command named `program` with its texts and options.
    package init(
        program: String, operands: String = "", sampleOperands: [String] = [], otherUsages: [String] = [],
        summary: String, sections: [Section], footer: String = ""
    ) {
        self.program = program
        self.operands = operands
        self.sampleOperands = sampleOperands
        self.otherUsages = otherUsages
        self.summary = summary
        self.sections = sections
        self.footer = footer
    }

    /// Every option, in the order of the help text.
    package var options: [OptionSpec] { sections.flatMap(\.options) }

    /// Every name an option is declared by (`-h` and `--help` included).
    package var declaredNames: Set<String> { Set(options.flatMap(\.names)) }

    /// The option declared by `name` (long or short); nil when none is.
    package func option(named name: String) -> OptionSpec? {
        options.first { $0.names.contains(name) }
    }

    /// A valid command line that gives `option`: the sample operands, every other required option
    /// with its sample value (unless the option is used `alone`), then what `option` needs, the
    /// option and its sample value.
    package func sampleCommandLine(for option: OptionSpec) -> [String] {
        let required = option.alone ? [] : options.filter { $0.synopsis == .required && $0.name != option.name }
        return sampleOperands + required.flatMap(\.sampleArguments) + option.sampleArguments
    }

    /// The `--help` text (`HelpGenerator.help(for:)`).
    package var help: String { HelpGenerator.help(for: self) }
}
