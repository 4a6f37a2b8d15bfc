// SPDX-License-Identifier: Apache-2.0

import SleepTapCommandLine
import Testing

@Suite("help generated from option declarations")
struct HelpGeneratorTests {
    static let spec = CommandSpec(
        program: "tool",
        operands: "FILE...",
        summary: """
            Does one thing
            well.

            Second paragraph.
            """,
        sections: [
            .init(
                nil,
                [
                    OptionSpec("--dir", value: "DIR", synopsis: .required, example: "d", help: "where"),
                    OptionSpec("--keys", value: "DIR", example: "k", help: "the keys"),
                    OptionSpec("--insecure", synopsis: .orPrevious, help: "no keys"),
                    OptionSpec("--start", value: "T", example: "1", help: "start"),
                    OptionSpec("--speed", value: "N", synopsis: .withPrevious, example: "2", help: "speed"),
                    OptionSpec("--bed", value: "HH:MM", example: "22:00", help: "bed"),
                    OptionSpec("--wake", value: "HH:MM", synopsis: .insidePrevious, example: "07:00", help: "wake"),
                ]),
            .init(
                "Heading paragraph.",
                [
                    OptionSpec(
                        "--a-very-long-option-name", value: "VALUE", example: "v",
                        help: String(repeating: "word ", count: 30)),
                    .helpOption(), .versionOption(),
                ]),
        ],
        footer: "Exit:  0 ok\n       64 bad")

    @Test(
        "usage line, wrapped paragraphs, aligned and wrapped options, a long label on its own line, the footer as written"
    )
    func rendering() {
        let words = Array(repeating: "word", count: 30)
        let expected = """
            usage: tool FILE... --dir DIR [--keys DIR | --insecure] [--start T --speed N]
                        [--bed HH:MM [--wake HH:MM]] [--a-very-long-option-name VALUE]

            Does one thing well.

            Second paragraph.

              --dir DIR     where
              --keys DIR    the keys
              --insecure    no keys
              --start T     start
              --speed N     speed
              --bed HH:MM   bed
              --wake HH:MM  wake

            Heading paragraph.
              --a-very-long-option-name VALUE
                            \(words.prefix(17).joined(separator: " "))
                            \(words.dropFirst(17).joined(separator: " "))
              -h, --help    this text (wins over any other argument)
              --version     print the version

            Exit:  0 ok
                   64 bad
            """
        #expect(Self.spec.help == expected, "\(Self.spec.help)")
    }

    @Test("The reader of a declared command refuses undeclared options and leaves operands to the parser")
    func declaredNames() throws {
        var reader = ArgumentReader(["file", "--dir=a", "-h", "--bogus"], command: Self.spec)
        #expect(try reader.nextFlag() == "file")
        #expect(try reader.nextFlag() == "--dir")
        #expect(try reader.value("--dir") == "a")
        #expect(try reader.nextFlag() == "-h")
        #expect(throws: UsageError("unknown option --bogus")) { _ = try reader.nextFlag() }
        #expect(Self.spec.sampleCommandLine(for: Self.spec.options[2]) == ["--dir", "d", "--insecure"])
        #expect(Self.spec.sampleCommandLine(for: Self.spec.options[0]) == ["--dir", "d"])
    }
}
