// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Regressions from a fresh user's attack on the executables.
@Suite("robustness", .serialized)
struct RobustnessTests {
    @Test("Typing a wake time without --time-zone works (it used to trap on exclusive access)")
    func manualEntryWithoutZone() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let watch = try scenario.watch()
        try watch.expect(.watchStarted)
        watch.send(line: "bed")
        try watch.expect(.fallbackManualEntry)
        watch.send(line: "07:00")
        try watch.expect(.manualWakeTime) { $0.string("localTime") == "07:00" }
        watch.send(line: "xx")
        try watch.expect(.inputRejected)
        #expect(watch.isRunning)
    }

    @Test("A second phone on the same endpoint or state dir refuses to start; the first keeps serving")
    func singleInstance() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let first = try scenario.phone()
        try first.expect(.phoneStarted)
        let sameEndpoint = try scenario.runToExit(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/other"])
        #expect(sameEndpoint.status == 69)
        #expect(sameEndpoint.stderr.contains("another process is listening"), "\(sameEndpoint.stderr)")
        let sameDir = try scenario.runToExit(
            "phone", ["--endpoint", "ipc://\(scenario.dir)/second.sock", "--state-dir", "\(scenario.dir)/phone"])
        #expect(sameDir.status == 73)
        #expect(sameDir.stderr.contains("in use by another phone (pid \(first.pid))"), "\(sameDir.stderr)")
        let watch = try scenario.watch()
        try watch.expect(.batchApplied)
        try first.expect(.ackReceived)
    }

    @Test("An ipc endpoint naming an ordinary file is refused and the file kept")
    func endpointOverFile() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let path = "\(scenario.dir)/precious.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("keep me".utf8)))
        let result = try scenario.runToExit(
            "phone", ["--endpoint", "ipc://\(path)", "--state-dir", "\(scenario.dir)/p"])
        #expect(result.status == 69)
        #expect(result.stderr.contains("exists and is not a socket"))
        #expect(FileManager.default.contents(atPath: path) == Data("keep me".utf8))
    }

    @Test("An option where a value belongs is a usage error, not a directory named after it; --help there is help")
    func optionAsValue() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let result = try scenario.runToExit("phone", ["--endpoint", scenario.endpoint, "--state-dir", "--insecure"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--state-dir needs a value (found the option --insecure instead)"))
        let help = try scenario.runToExit("phone", ["--endpoint", scenario.endpoint, "--state-dir", "--help"])
        #expect(help.status == 0)
        #expect(!FileManager.default.fileExists(atPath: "--help"))
        #expect(!FileManager.default.fileExists(atPath: "--insecure"))
    }

    @Test("After an oversized frame drops the link, the watch reconnects by itself and says HELLO again")
    func oversizedFrameRelink() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.router) { router in
            try router.setLinger(milliseconds: 0)
            try router.setRouterMandatory(true)
            try router.bind(scenario.endpoint)
            let watch = try scenario.watch()
            let first = try watch.expect(.helloSent)
            var items = [PollItem.socket(router, events: .readable)]
            guard try poll(&items, timeoutMilliseconds: 10_000) > 0 else {
                Issue.record("no HELLO reached the fake phone")
                return
            }
            _ = try router.receive()
            let huge = "{\"v\":1,\"type\":\"ERROR\",\"reason\":\"" + String(repeating: "x", count: 70_000) + "\"}"
            try router.send([Array("watch".utf8), Array(huge.utf8)])
            let down = try watch.expect(.linkDown, from: first.index)
            try watch.expect(.linkReconnect, from: down.index)
            try watch.expect(.helloSent, from: down.index)
            #expect(watch.isRunning)
        }
    }
}

@Suite("liveness", .serialized)
struct LivenessTests {
    @Test("Heartbeats both ways: a stopped watch goes offline at the phone within seconds, and comes back")
    func peerOfflineOnline() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        let watch = try scenario.watch()
        let online = try phone.expect(.peerOnline)
        try watch.expect(.peerOnline)
        #expect(kill(watch.pid, SIGSTOP) == 0)
        let offline = try phone.expect(.peerOffline, from: online.index)
        #expect((offline.event.fields["silentFor"] as? Double ?? 0) >= 3)
        #expect(kill(watch.pid, SIGCONT) == 0)
        try phone.expect(.peerOnline, from: offline.index)
        // The watch's own pause is not the phone's silence.
        #expect(!watch.events.contains { $0.name == .peerOffline })
        // A stopped phone goes offline at the watch too.
        let watchOnline = watch.events.count
        #expect(kill(phone.pid, SIGSTOP) == 0)
        defer { kill(phone.pid, SIGCONT) }
        try watch.expect(.peerOffline, from: watchOnline)
    }
}
