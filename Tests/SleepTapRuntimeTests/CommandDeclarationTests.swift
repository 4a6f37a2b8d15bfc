// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import Testing

@testable import SleepTapRuntime

/// phone's, watch's and keygen's options are declared once (`CommandDeclarations.swift`): each
/// declared option is parsed, nothing else is, and `--help` is generated from the declarations.
@Suite("phone, watch and keygen options, declared once")
struct CommandDeclarationTests {
    /// Each command, with its parser reduced to "what did it make of this command line".
    static let commands: [(spec: CommandSpec, parse: @Sendable ([String]) throws -> String)] = [
        (CommandLineParser.phoneCommand, { "\(try CommandLineParser.parsePhone($0))" }),
        (CommandLineParser.watchCommand, { "\(try CommandLineParser.parseWatch($0))" }),
        (CommandLineParser.keygenCommand(.phone), { "\(try CommandLineParser.parseKeygen($0))" }),
        (CommandLineParser.keygenCommand(.watch), { "\(try CommandLineParser.parseKeygen($0))" }),
    ]

    @Test("Every declared option, given with its sample value, is handled by the parser")
    func everyDeclaredOptionParses() {
        for (spec, parse) in Self.commands {
            for option in spec.options {
                for name in option.names {
                    var arguments = spec.sampleCommandLine(for: option)
                    if let index = arguments.lastIndex(of: option.name) { arguments[index] = name }
                    #expect(throws: Never.self, "\(spec.program) \(arguments)") { _ = try parse(arguments) }
                }
            }
        }
    }

    @Test("An option that is not declared is refused as unknown, in either form")
    func undeclaredRefused() {
        for (spec, parse) in Self.commands {
            let base = spec.options.filter { $0.synopsis == .required }.flatMap(\.sampleArguments)
            for extra in [["--bogus"], ["--bogus=1"], ["-x"], ["--dir-extra", "a"]] {
                #expect(throws: UsageError("unknown option \(extra[0].split(separator: "=")[0])"), "\(spec.program)") {
                    _ = try parse(base + extra)
                }
            }
        }
    }

    @Test("--help is generated from the declarations: every option in it, lines at most 100 columns")
    func helpFromDeclarations() {
        for (spec, _) in Self.commands {
            let help = spec.help
            #expect(help.hasPrefix("usage: \(spec.program)"))
            for option in spec.options {
                #expect(help.contains("  " + option.label), "\(spec.program): \(option.name)")
            }
            for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
                #expect(line.count <= HelpGenerator.width, "\(spec.program): \(line)")
                #expect(!line.hasSuffix(" "), "\(spec.program): trailing space in \(line)")
            }
        }
        let usage = CommandLineParser.watchCommand.help.split(separator: "\n").prefix(3).joined(separator: "\n")
        #expect(usage.contains("[--keys DIR | --insecure]"), "\(usage)")
        #expect(usage.contains("[--bed-at HH:MM [--manual-wake HH:MM] [--stop-alarm-after SECS]]"), "\(usage)")
        #expect(
            CommandLineParser.phoneCommand.help.contains(
                "[--clock-start ISO8601 --clock-speed N --clock-anchor UNIX_SECONDS]"))
    }
}
