// SPDX-License-Identifier: Apache-2.0

/// `text` with control and format characters (a newline, an escape sequence in a file name)
/// written as `\u{…}`, so that no input a tool echoes can move the terminal's cursor or forge a
/// line (Unicode general categories Cc and Cf).
package func printable(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}
