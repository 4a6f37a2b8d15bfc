// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Inputs the executables used to take although they were ambiguous or unsafe end the process
/// with the documented status and a message naming the input.
@Suite("Strict inputs of phone and watch", .serialized)
struct StrictInputTests {
    @Test("An option given twice ends phone and watch with exit 64 naming the option")
    func repeatedOption() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        for program in ["phone", "watch"] {
            let result = try scenario.runToExit(
                program,
                [
                    "--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(program)", "--time-zone", "UTC",
                    "--time-zone", "Europe/Berlin",
                ])
            #expect(result.status == 64, "\(program): \(result.stderr)")
            #expect(result.stderr.contains("--time-zone is given twice"), "\(program): \(result.stderr)")
        }
    }

    @Test("A schedule file naming a key twice ends the phone with exit 65 naming the key")
    func scheduleDuplicateKey() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let path = "\(scenario.dir)/twice.json"
        let week = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday"].map { "\"\($0)\":\"07:00\"," }
        let text = "{\"schemaVersion\":1,\"wake\":{\(week.joined())\"sunday\":\"08:00\",\"sunday\":\"09:00\"}}"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        let result = try scenario.runToExit(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--schedule", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("schedule file \(path): key wake.sunday appears twice"), "\(result.stderr)")
    }

    @Test("A keys directory or peer certificate others may write ends the phone with exit 65 naming path and mode")
    func keysWritableByOthers() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = "\(scenario.dir)/keys"
        for role in ["phone", "watch"] {
            #expect(try scenario.runToExit(role, ["keygen", "--dir", keys]).status == 0)
        }
        let arguments = ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--keys", keys]
        #expect(chmod(keys, 0o777) == 0)
        let openDirectory = try scenario.runToExit("phone", arguments)
        #expect(openDirectory.status == 65)
        #expect(openDirectory.stderr.contains("\(keys): the keys directory is mode 777"), "\(openDirectory.stderr)")
        #expect(chmod(keys, 0o700) == 0 && chmod("\(keys)/watch.key", 0o666) == 0)
        let openCertificate = try scenario.runToExit("phone", arguments)
        #expect(openCertificate.status == 65)
        #expect(
            openCertificate.stderr.contains("\(keys)/watch.key: the certificate is mode 666"),
            "\(openCertificate.stderr)")
        // keygen into a directory others may write: refused, nothing written.
        let shared = "\(scenario.dir)/shared"
        #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o777) == 0)
        let keygen = try scenario.runToExit("watch", ["keygen", "--dir", shared])
        #expect(keygen.status == 73)
        #expect(keygen.stderr.contains("\(shared): the keys directory is mode 777"), "\(keygen.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared).isEmpty)
    }

    @Test("ipc:///tmp and an ipc path below a regular file: the message says what the path is, no harmful advice")
    func ipcPathAdvice() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let directory = try scenario.runToExit(
            "phone", ["--endpoint", "ipc:///tmp", "--state-dir", "\(scenario.dir)/p"])
        #expect(directory.status == 69)
        #expect(directory.stderr.contains("/tmp is a directory"), "\(directory.stderr)")
        let file = "\(scenario.dir)/afile"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let belowFile = try scenario.runToExit(
            "phone", ["--endpoint", "ipc://\(file)/p.sock", "--state-dir", "\(scenario.dir)/p"])
        #expect(belowFile.status == 69)
        #expect(belowFile.stderr.contains("\(file) is not a directory (a regular file)"), "\(belowFile.stderr)")
        for result in [directory, belowFile] {
            #expect(!result.stderr.contains("chmod"), "\(result.stderr)")
            #expect(!result.stderr.contains("ipc:///sleeptap-"), "\(result.stderr)")
        }
    }
}
