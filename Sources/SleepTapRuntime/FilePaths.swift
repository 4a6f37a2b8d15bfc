// SPDX-License-Identifier: Apache-2.0

/// Path arithmetic on plain strings, without Foundation's `NSString` path methods.
///
/// `NSString.deletingLastPathComponent` in the toolchain's Foundation (swift-corelibs-foundation,
/// Swift 6.3.1 on Linux) traps on a path whose result would be empty from a one-character name:
/// `"m"`, `"x/"`, `"é"`, `"."`; a command line such as `sleeptap-calibrate --out m` died with
/// SIGILL. The rule here is the one Apple documents for that method
/// (<https://developer.apple.com/documentation/foundation/nsstring/deletinglastpathcomponent>).
package enum FilePaths {
    /// The directory part of `path`: `path` without its last component and the slashes before
    /// it, trailing slashes ignored; `"/"` for a component right under the root, and `""` for a
    /// path of one component (the current directory).
    ///
    /// `"/tmp/scratch.tiff"` → `"/tmp"`, `"/tmp/lock/"` → `"/tmp"`, `"/tmp/"` → `"/"`, `"/"` →
    /// `"/"`, `"scratch.tiff"` → `""`, `"a//b"` → `"a"`.
    package static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var parent = trimmed[..<slash]
        while parent.hasSuffix("/") { parent.removeLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// `parent(of:)`, or `"."` where that is empty: a directory to open or list.
    package static func directory(of path: String) -> String {
        let parent = parent(of: path)
        return parent.isEmpty ? "." : parent
    }
}
