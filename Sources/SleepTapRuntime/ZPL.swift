// SPDX-License-Identifier: Apache-2.0

/// A ZPL text that breaks the language's rules: the 1-based line and what is wrong with it.
package struct ZPLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line number.
    package var line: Int
    package var reason: String
    package init(line: Int, _ reason: String) {
        self.line = line
        self.reason = reason
    }
    package var description: String { "line \(line): \(reason)" }
}

/// The ZeroMQ Property Language (ZPL, https://rfc.zeromq.org/spec/4/), the text format of ZeroMQ
/// CURVE certificates (czmq's `zcert`, pyzmq's `zmq.auth`): one `name` or `name = value` per line,
/// children indented 4 spaces deeper than their parent, `#` starts a comment.
///
/// Parsing is strict: every deviation is an error naming the line. On top of the specification it
/// refuses tabs in the indentation, a quote that is never closed (the specification reads such a
/// value as unquoted text), text after a closing quote and control characters, because each of
/// them is far more likely a damaged file than a meant value.
package struct ZPLDocument: Equatable, Sendable {
    /// One property: its names from the top level down, its value, and where it was written.
    package struct Property: Equatable, Sendable {
        /// Names from the top level down, e.g. `["curve", "public-key"]`.
        package var path: [String]
        /// The value without its quotes; nil for a property written without `=`.
        package var value: String?
        /// 1-based line number.
        package var line: Int
    }

    /// Every property, in the order written (ZPL allows a name more than once).
    package var properties: [Property]

    /// Parses a ZPL text.
    /// - Parameter text: the whole text; lines end in LF, CR or CR LF.
    /// - Throws: `ZPLError` naming the first line that breaks the rules.
    /// - Complexity: O(n) in the length of `text`.
    package init(parsing text: String) throws(ZPLError) {
        var properties: [Property] = []
        /// The names of the previous property's path: a child may be at most one level deeper.
        var stack: [String] = []
        let lines = text.replacing("\r\n", with: "\n").split(omittingEmptySubsequences: false) {
            $0 == "\n" || $0 == "\r"
        }
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = Array(raw.unicodeScalars)
            var position = 0
            while position < line.count, line[position] == " " { position += 1 }
            let indent = position
            if position < line.count, line[position] == "\t" {
                throw ZPLError(line: number, "a tab in the indentation; ZPL indents with 4 spaces per level")
            }
            let rest = line[position...]
            if rest.allSatisfy({ $0 == " " || $0 == "\t" }) || rest.first == "#" { continue }
            guard indent % 4 == 0 else {
                throw ZPLError(line: number, "indented \(indent) spaces; ZPL indents in steps of 4 spaces")
            }
            let level = indent / 4
            guard level <= stack.count else {
                throw ZPLError(
                    line: number,
                    "indented \(indent) spaces, more than 4 deeper than the property above it")
            }
            let nameStart = position
            while position < line.count, Self.isNameCharacter(line[position]) { position += 1 }
            guard position > nameStart else {
                throw ZPLError(
                    line: number,
                    "expected a property name (letters, digits and $ - _ @ . & + /), found \(Self.show(line[position]))"
                )
            }
            let name = String(String.UnicodeScalarView(line[nameStart..<position]))
            stack.removeSubrange(level...)
            stack.append(name)
            while position < line.count, line[position] == " " || line[position] == "\t" { position += 1 }
            var value: String?
            if position < line.count, line[position] == "=" {
                value = try Self.value(line, from: position + 1, line: number)
            } else if position < line.count, line[position] != "#" {
                throw ZPLError(
                    line: number, "expected = or the end of the line after \(name), found \(Self.show(line[position]))")
            }
            properties.append(Property(path: stack, value: value, line: number))
        }
        self.properties = properties
    }

    /// Reads the value after `=`: quoted (the quotes are not part of it) or bare up to a comment.
    private static func value(_ line: [Unicode.Scalar], from start: Int, line number: Int) throws(ZPLError) -> String {
        var position = start
        while position < line.count, line[position] == " " || line[position] == "\t" { position += 1 }
        var scalars: ArraySlice<Unicode.Scalar>
        if position < line.count, line[position] == "\"" || line[position] == "'" {
            let quote = line[position]
            guard let close = line[(position + 1)...].firstIndex(of: quote) else {
                throw ZPLError(line: number, "the value opens a quote (\(quote)) that is never closed")
            }
            scalars = line[(position + 1)..<close]
            var after = close + 1
            while after < line.count, line[after] == " " || line[after] == "\t" { after += 1 }
            if after < line.count, line[after] != "#" {
                throw ZPLError(line: number, "text after the closing quote: \(show(line[after]))")
            }
        } else {
            let end = line[position...].firstIndex(of: "#") ?? line.count
            scalars = line[position..<end]
            while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        }
        if let bad = scalars.first(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            throw ZPLError(line: number, "the value contains the control character \(show(bad))")
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// `name-char = ALPHA | DIGIT | "$" | "-" | "_" | "@" | "." | "&" | "+" | "/"`.
    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "$", "-", "_", "@", ".", "&", "+", "/": true
        default: false
        }
    }

    private static func show(_ scalar: Unicode.Scalar) -> String {
        scalar.value < 0x20 || scalar.value >= 0x7f
            ? "U+" + String(scalar.value, radix: 16, uppercase: true) : "\"\(scalar)\""
    }
}
