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

/// The one reader of input files: a regular file of at most a limit, refused by kind or size
/// with words that name what is wrong.
@Suite("Bounded file reader")
struct BoundedFileTests {
    @Test("A file of exactly the limit is read; one byte more is refused with its size and the limit")
    func limit() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/f.json"
        try Data(repeating: 0x61, count: 1_024).write(to: URL(fileURLWithPath: path))
        #expect(try BoundedFile.read(path, limit: 1_024) == Data(repeating: 0x61, count: 1_024))
        let error = try #require(throws: BoundedFile.Failure.self) { try BoundedFile.read(path, limit: 1_023) }
        #expect(error == .tooLarge(size: 1_024, limit: 1_023))
        #expect(error.description == "1024 bytes, over the 1023-byte limit")
        let big = try #require(throws: BoundedFile.Failure.self) { try BoundedFile.read(path, limit: 512) }
        #expect(big.description == "1024 bytes, over the 512-byte limit")
        #expect(
            BoundedFile.Failure.tooLarge(size: 17 << 20, limit: 16 << 20).description
                == "17825792 bytes, over the 16 MiB (16777216-byte) limit")
        #expect(
            BoundedFile.Failure.tooLarge(size: 70_000, limit: 65_536).description
                == "70000 bytes, over the 64 KiB (65536-byte) limit")
    }

    @Test("A directory, a FIFO and a missing file are each named for what they are; a FIFO never waits")
    func kinds() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mkfifo(dir + "/fifo", 0o600) == 0)
        for (path, failure, words) in [
            (dir, BoundedFile.Failure.isDirectory, "is a directory, not a file"),
            (dir + "/fifo", .notRegularFile, "is not a regular file (a device, FIFO or socket)"),
            (dir + "/none", .cannotOpen(Errno(ENOENT)), "cannot be read: No such file or directory"),
        ] {
            let error = try #require(throws: BoundedFile.Failure.self) { try BoundedFile.read(path, limit: 100) }
            #expect(error == failure && error.description == words, "\(path): \(error)")
        }
        #expect(BoundedFile.Failure.cannotOpen(Errno(ENOENT)).errno?.name == "ENOENT")
        #expect(BoundedFile.Failure.isDirectory.errno == nil)
    }

    @Test("A name in an open directory is read into a buffer kept from file to file")
    func inDirectory() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(repeating: 0x62, count: 10_000).write(to: URL(fileURLWithPath: dir + "/long"))
        try Data("short".utf8).write(to: URL(fileURLWithPath: dir + "/short"))
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        var buffer = Data()
        #expect(try BoundedFile.read("long", in: fd, limit: 1 << 20, into: &buffer) == 10_000)
        #expect(buffer.prefix(10_000) == Data(repeating: 0x62, count: 10_000))
        let count = try BoundedFile.read("short", in: fd, limit: 1 << 20, into: &buffer)
        #expect(count == 5 && buffer.prefix(count) == Data("short".utf8))
    }
}
