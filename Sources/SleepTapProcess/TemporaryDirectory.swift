// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// A temp dir could not be made; `description` names the template and the C library's reason.
package struct TemporaryDirectoryError: Error, CustomStringConvertible {
    /// The mkdtemp(3) template, e.g. `/tmp/sleeptap-demo-XXXXXX`.
    package let template: String
    /// The errno mkdtemp(3) set.
    package let code: Int32
    package var description: String { "cannot create a temp dir \(template): \(Errno(code))" }
}

extension Reaper {
    /// Makes a new directory for one run's state files and sockets, `/tmp/PREFIX-XXXXXX` by
    /// mkdtemp(3) (mode 0700, a name no other process holds), and registers it for removal on
    /// every way out unless `removeOnExit` is false.
    ///
    /// The path is kept short on purpose: an ipc endpoint below it must stay within 107 bytes.
    /// - Parameters:
    ///   - prefix: the name's start, e.g. `sleeptap-demo`.
    ///   - removeOnExit: false to keep the directory (`--keep`).
    /// - Returns: the directory's path.
    /// - Throws: `TemporaryDirectoryError` with mkdtemp's errno.
    package func makeTemporaryDirectory(
        prefix: String, removeOnExit: Bool = true
    ) throws(TemporaryDirectoryError) -> String {
        let template = "/tmp/\(prefix)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw TemporaryDirectoryError(template: template, code: errno) }
        let path = String(cString: made)
        if removeOnExit { track(directory: path) }
        return path
    }
}
