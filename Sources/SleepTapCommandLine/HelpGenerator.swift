// SPDX-License-Identifier: Apache-2.0

/// Renders a `CommandSpec` as its `--help` text, in the spirit of swift-argument-parser's
/// `HelpGenerator`: the usage line, the summary, the options with their descriptions aligned in
/// one column, then the footer as written; every line at most `width` columns where the words
/// allow.
package enum HelpGenerator {
    /// The widest line, in characters.
    package static let width = 100
    /// Options are indented by this many spaces.
    static let indent = 2
    /// A label longer than this goes on a line of its own, its description on the next.
    static let longestInlineLabel = 22

    /// The whole help text of `command`, without a final newline.
    package static func help(for command: CommandSpec) -> String {
        var blocks = [usage(for: command)]
        let summary = paragraphs(command.summary)
        if !summary.isEmpty { blocks.append(summary) }
        let column = descriptionColumn(command.options)
        for section in command.sections {
            var lines: [String] = []
            if let heading = section.heading { lines.append(paragraphs(heading)) }
            lines += section.options.map { optionLines($0, column: column) }
            blocks.append(lines.joined(separator: "\n"))
        }
        if !command.footer.isEmpty { blocks.append(command.footer) }
        return blocks.joined(separator: "\n\n")
    }

    /// `usage: PROGRAM OPERANDS OPTIONS...`, continuation lines aligned after the program name.
    static func usage(for command: CommandSpec) -> String {
        var items: [String] = []
        for option in command.options {
            let form = option.usageForm
            switch option.synopsis {
            case .hidden: continue
            case .required: items.append(form)
            case .optional: items.append("[\(form)]")
            case .orPrevious, .withPrevious, .insidePrevious:
                guard let last = items.popLast(), last.hasSuffix("]") else {
                    items.append("[\(form)]")
                    continue
                }
                let open = String(last.dropLast())
                switch option.synopsis {
                case .orPrevious: items.append("\(open) | \(form)]")
                case .withPrevious: items.append("\(open) \(form)]")
                default: items.append("\(open) [\(form)]]")
                }
            }
        }
        let head = "usage: \(command.program)" + (command.operands.isEmpty ? "" : " \(command.operands)")
        let hanging = String(repeating: " ", count: "usage: \(command.program) ".count)
        let first = items.isEmpty ? head : wrap(items, first: head + " ", hanging: hanging)
        return ([first] + command.otherUsages.map { "       " + $0 }).joined(separator: "\n")
    }

    /// The column where descriptions start: after the longest label that fits on a line with its
    /// description, and two spaces.
    static func descriptionColumn(_ options: [OptionSpec]) -> Int {
        let widths = options.map(\.label.count).filter { $0 <= longestInlineLabel }
        return indent + (widths.max() ?? longestInlineLabel) + 2
    }

    /// An option's label and its description wrapped at the column.
    static func optionLines(_ option: OptionSpec, column: Int) -> String {
        let label = String(repeating: " ", count: indent) + option.label
        let pad = String(repeating: " ", count: column)
        let text = words(option.help)
        if label.count + 2 <= column {
            let first = label + String(repeating: " ", count: column - label.count)
            return wrap(text, first: first, hanging: pad)
        }
        return label + "\n" + wrap(text, first: pad, hanging: pad)
    }

    /// Text re-wrapped at the width: each run of lines that start with a letter is one paragraph,
    /// joined and wrapped; an indented line (a table, a list) and a blank line stay as written.
    static func paragraphs(_ text: String) -> String {
        var out: [String] = []
        var run: [String] = []
        func flush() {
            if !run.isEmpty { out.append(wrap(words(run.joined(separator: " ")), first: "", hanging: "")) }
            run = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty || line.first == " " {
                flush()
                out.append(String(line))
            } else {
                run.append(String(line))
            }
        }
        flush()
        return out.joined(separator: "\n")
    }

    static func words(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }

    /// `items` after `first`, separated by spaces, broken before an item that would pass the
    /// width; each new line starts with `hanging`.
    static func wrap(_ items: [String], first: String, hanging: String) -> String {
        var lines: [String] = []
        var line = first
        var lineHasItem = false
        for item in items {
            if lineHasItem && line.count + 1 + item.count > width {
                lines.append(line)
                line = hanging + item
            } else {
                line += (lineHasItem ? " " : "") + item
            }
            lineHasItem = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
