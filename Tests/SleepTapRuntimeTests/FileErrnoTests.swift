// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A failing write carries the failing call's errno, so a caller tells a full disk from a
/// permission problem by its code (errno(3)), not by its words.
@Suite("File errors keep their errno")
struct FileErrnoTests {
    @Test(
        "A save into a full file system fails with errno ENOSPC; the old file is untouched",
        .enabled(if: geteuid() == 0, "mounting a tmpfs needs root")
    )
    func fullFileSystemGivesENOSPC() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A 4 KiB tmpfs (tmpfs(5) `size=`) holds one page: a small file fills it.
        try #require(mount("tmpfs", dir, "tmpfs", 0, "size=4k") == 0, "mount: \(String(cString: strerror(errno)))")
        defer { umount2(dir, Int32(MNT_DETACH)) }
        let file = StateFile<String>(path: dir + "/phone.json")
        try file.save("small")
        let before = FileManager.default.contents(atPath: file.path)
        let error = try #require(throws: FileError.self) {
            try file.save(String(repeating: "x", count: 64 * 1024))
        }
        #expect(error.errno == Errno(ENOSPC) && error.errno?.name == "ENOSPC")
        #expect(FileManager.default.contents(atPath: file.path) == before)
    }

    @Test(
        "A save into a directory without write permission fails with errno EACCES",
        .enabled(if: geteuid() != 0, "root passes permission checks")
    )
    func readOnlyDirectoryGivesEACCES() throws {
        let dir = try StateFileTests.tempDir()
        defer {
            chmod(dir, 0o700)
            try? FileManager.default.removeItem(atPath: dir)
        }
        try #require(chmod(dir, 0o500) == 0)
        let error = try #require(throws: FileError.self) { try StateFile<String>(path: dir + "/phone.json").save("x") }
        #expect(error.errno == Errno(EACCES))
    }

    @Test("A missing directory gives errno ENOENT at the open of the temp file")
    func missingDirectoryGivesENOENT() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let error = try #require(throws: FileError.self) {
            try AtomicFile.write(Data("x".utf8), to: dir + "/absent/phone.json")
        }
        #expect(error.errno?.name == "ENOENT")
    }

    @Test("A state that cannot be encoded fails with no errno: no system call failed")
    func encodingFailureHasNoErrno() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let error = try #require(throws: FileError.self) { try StateFile<Double>(path: dir + "/x.json").save(.nan) }
        #expect(error.errno == nil)
        #expect(error.reason.hasPrefix("cannot encode state"))
    }

    @Test("An errno keeps its number, its name and the system's words; a failed call's reason is made of them")
    func errnoValue() {
        let full = Errno(ENOSPC)
        #expect(full.code == 28 && full.name == "ENOSPC" && full.message == "No space left on device")
        #expect(Errno(EDQUOT).name == "EDQUOT" && Errno(EPIPE).name == "EPIPE")
        #expect(Errno(4_095).name == nil)
        #expect(PersistResult.errnoName(EROFS) == "EROFS")
        let error = FileError(path: "/s/phone.json", "open failed", errno: full)
        #expect(error.description == "/s/phone.json: open failed: No space left on device")
        #expect(error.errno == full)
    }
}
