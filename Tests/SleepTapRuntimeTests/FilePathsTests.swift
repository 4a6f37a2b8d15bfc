// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import SleepTapRuntime

/// `FilePaths.parent(of:)`: the directory part of a path, by Apple's rule for
/// `NSString.deletingLastPathComponent`, for the one-character names on which the toolchain's
/// Foundation traps.
@Suite("File paths")
struct FilePathsTests {
    @Test(
        "The directory part: Apple's examples, repeated and trailing slashes, and the one-character names Foundation traps on",
        arguments: [
            ("/tmp/scratch.tiff", "/tmp"), ("/tmp/lock/", "/tmp"), ("/tmp/", "/"), ("/tmp", "/"), ("/", "/"),
            ("scratch.tiff", ""), ("a//b", "a"), ("//a", "/"), ("///a", "/"), ("a/b/", "a"), ("/a/b//", "/a"),
            ("./x", "."), ("../x", ".."), ("m", ""), ("x/", ""), ("é", ""), (".", ""), ("//", "/"), ("", ""),
            ("a b/c d.json", "a b"), ("dir/é", "dir"),
        ])
    func parent(path: String, parent: String) {
        #expect(FilePaths.parent(of: path) == parent)
        #expect(FilePaths.directory(of: path) == (parent.isEmpty ? "." : parent))
    }
}
