// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapRuntime

/// The phone's state in two files: phone.json (the sync part) is written at every save,
/// phone-app.json (notices, run history, forecast) only when it changed, so an ACK writes one
/// small file.
@Suite("Phone state files")
struct PhoneStateFilesTests {
    static let batch = WakeBatch(
        seq: 3, generatedAt: ISO8601.date("2026-12-01T21:00:00Z")!, timeZone: "UTC",
        entries: [
            WakeEntry(
                wake: ISO8601.date("2026-12-02T07:00:00Z")!, localDate: "2026-12-02", localTime: "07:00",
                timeZone: "UTC")
        ])

    /// A phone that ran once and sent batch 3, not yet acknowledged.
    static var sent: PhoneSyncState {
        var log = RefreshLog()
        log.markScheduled(at: ISO8601.date("2026-12-01T20:00:00Z")!)
        return PhoneSyncState(
            epoch: 0x1234, lastSeq: 3, outbox: batch, acked: false, deviceSeed: 99, refreshLog: log)
    }

    /// The inode of a file (a StateFile write replaces the file, so a new inode means a write).
    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    @Test("An ACK writes phone.json alone; a change of the run history writes phone-app.json too")
    func ackWritesTheSyncPartAlone() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files = PhoneStateFiles(syncPath: dir + "/phone.json", savedApp: nil)
        #expect(files.save(Self.sent) == .succeeded)
        let appBefore = Self.inode(dir + "/phone-app.json")
        let syncBefore = Self.inode(dir + "/phone.json")
        #expect(appBefore != nil && syncBefore != nil)

        var acked = Self.sent
        acked.acked = true
        #expect(files.save(acked) == .succeeded)
        #expect(Self.inode(dir + "/phone-app.json") == appBefore, "the ACK rewrote phone-app.json")
        #expect(Self.inode(dir + "/phone.json") != syncBefore)
        let text = try String(contentsOfFile: dir + "/phone.json", encoding: .utf8)
        #expect(!text.contains("refreshLog") && !text.contains("notifications"))
        #expect(try StateFile<PhoneSyncState>(path: dir + "/phone.json").load()?.acked == true)

        var ran = acked
        ran.refreshLog.markScheduled(at: ISO8601.date("2026-12-02T08:00:00Z")!)
        #expect(files.save(ran) == .succeeded)
        #expect(Self.inode(dir + "/phone-app.json") != appBefore)
        #expect(try StateFile<PhoneAppState>(path: dir + "/phone-app.json").load() == ran.app)
    }

    @Test("A phone.json written before the split is read whole, and the first save moves its app part")
    func olderSingleFile() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try StateFile<PhoneSyncState>(path: dir + "/phone.json").save(Self.sent)
        let output = EventOutput(handle: FileHandle.nullDevice, clock: WallClock(), process: .phone)
        let loaded = try #require(
            try StateFile<PhoneSyncState>(path: dir + "/phone.json").load())
        var (state, files) = try PhoneStateFiles.load(
            loaded: loaded, syncPath: dir + "/phone.json", program: "phone", output: output)
        #expect(state == Self.sent)
        #expect(files.save(try #require(state)) == .succeeded)
        #expect(try StateFile<PhoneAppState>(path: dir + "/phone-app.json").load() == Self.sent.app)
        let text = try String(contentsOfFile: dir + "/phone.json", encoding: .utf8)
        #expect(!text.contains("refreshLog"))

        // Read back from the two files: the same state.
        (state, files) = try PhoneStateFiles.load(
            loaded: try StateFile<PhoneSyncState>(path: dir + "/phone.json").load(), syncPath: dir + "/phone.json",
            program: "phone", output: output)
        #expect(state == Self.sent)
    }

    @Test("One file missing while the other is there is said (state.recovered naming it), not a silent clean start")
    func oneFileMissing() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files = PhoneStateFiles(syncPath: dir + "/phone.json", savedApp: nil)
        #expect(files.save(Self.sent) == .succeeded)
        func said(_ remove: String) throws -> String {
            let copy = try StateFileTests.tempDir()
            defer { try? FileManager.default.removeItem(atPath: copy) }
            for name in ["phone.json", "phone-app.json"] where name != remove {
                try FileManager.default.copyItem(atPath: dir + "/" + name, toPath: copy + "/" + name)
            }
            let pipe = Pipe()
            let output = EventOutput(handle: pipe.fileHandleForWriting, clock: WallClock(), process: .phone)
            _ = try PhoneStateFiles.load(
                loaded: try StateFile<PhoneSyncState>(path: copy + "/phone.json").load(),
                syncPath: copy + "/phone.json", program: "phone", output: output)
            try pipe.fileHandleForWriting.close()
            return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        let noApp = try said("phone-app.json")
        #expect(noApp.contains("state.recovered") && noApp.contains("phone-app.json"), "\(noApp)")
        let noSync = try said("phone.json")
        #expect(noSync.contains("state.recovered") && noSync.contains("phone.json\""), "\(noSync)")
        #expect(try said("none").isEmpty, "both there: nothing to say")
    }

    @Test("phone-app.json with values no phone writes (a negative run, a forecast with no hours) is refused and said")
    func appPartValidation() throws {
        let at = ISO8601.date("2026-12-02T08:00:00Z")!
        var state = Self.sent
        state.refreshLog.markCompleted(
            at: at, success: true, lowPower: false, bucket: nil, kind: .background, duration: 12)
        state.weather = Forecast(
            fetchedAt: at, location: Coordinate(latitude: 52.5, longitude: 13.4)!, source: "test",
            hours: [HourlyWeather(time: at), HourlyWeather(time: at.addingTimeInterval(3_600))])
        #expect(state.app.validationProblem == nil)
        func edited(_ change: (inout [String: Any]) -> Void) throws -> String? {
            var object = try #require(
                JSONSerialization.jsonObject(with: JSONEncoder().encode(state.app)) as? [String: Any])
            change(&object)
            return try JSONDecoder().decode(PhoneAppState.self, from: JSONSerialization.data(withJSONObject: object))
                .validationProblem
        }
        func run(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { object in
                var log = object["refreshLog"] as! [String: Any]
                var history = log["history"] as! [[String: Any]]
                history[0][key] = value
                log["history"] = history
                object["refreshLog"] = log
            }
        }
        #expect(try edited(run("duration", -1)) == "refreshLog.history[0].duration -1.0: expected 0 to 86400 seconds")
        #expect(try edited(run("duration", 1e300))?.hasPrefix("refreshLog.history[0].duration 1e+300") == true)
        #expect(
            try edited { object in
                var weather = object["weather"] as! [String: Any]
                weather["hours"] = [Any]()
                object["weather"] = weather
            } == "weather.hours is empty (a forecast has hours)")
        #expect(
            try edited { object in
                var weather = object["weather"] as! [String: Any]
                weather["hours"] = Array((weather["hours"] as! [Any]).reversed())
                object["weather"] = weather
            } == "weather.hours[1].time is not after weather.hours[0].time")
        // On load the file is moved aside and the move is said.
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files = PhoneStateFiles(syncPath: dir + "/phone.json", savedApp: nil)
        #expect(files.save(state) == .succeeded)
        let bad = try String(contentsOfFile: dir + "/phone-app.json", encoding: .utf8)
            .replacingOccurrences(of: "\"duration\":12", with: "\"duration\":-1")
        #expect(bad.contains("\"duration\":-1"))
        try bad.write(toFile: dir + "/phone-app.json", atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: dir + "/phone-app.json.prev")
        let pipe = Pipe()
        let output = EventOutput(handle: pipe.fileHandleForWriting, clock: WallClock(), process: .phone)
        let (loaded, _) = try PhoneStateFiles.load(
            loaded: try StateFile<PhoneSyncState>(path: dir + "/phone.json").load(), syncPath: dir + "/phone.json",
            program: "phone", output: output)
        try pipe.fileHandleForWriting.close()
        let said = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(said.contains("state.recovered") && said.contains("duration -1.0"), "\(said)")
        // Said once: the refused file is not also reported missing.
        #expect(said.components(separatedBy: "state.recovered").count == 2, "\(said)")
        #expect(loaded?.refreshLog.history.isEmpty == true)
    }

    @Test("A failed write of phone-app.json names that file and leaves phone.json as it was")
    func failedAppWrite() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files = PhoneStateFiles(syncPath: dir + "/phone.json", savedApp: nil)
        // A directory where the file should be: refused before any write, with EISDIR.
        try FileManager.default.createDirectory(atPath: dir + "/phone-app.json", withIntermediateDirectories: false)
        let result = files.save(Self.sent)
        guard case .failed(let errno, _, let path) = result else {
            Issue.record("expected a failed write, got \(result)")
            return
        }
        #expect(errno == EISDIR)
        #expect(path == dir + "/phone-app.json")
        #expect(!FileManager.default.fileExists(atPath: dir + "/phone.json"))
    }
}
