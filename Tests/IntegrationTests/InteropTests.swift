// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// The real `phone` against a watch written in Python from docs/protocol.md alone
/// (Tests/Interop/watch_client.py, pyzmq): the doc is enough to build a client in another language.
@Suite("Interop: a Python watch (pyzmq) written from docs/protocol.md", .serialized)
struct InteropTests {
    /// Debian's Python, which has python3-zmq (the `python3` first on PATH may be another build without
    /// it); `SLEEPTAP_PYTHON` overrides it.
    static let python = ProcessInfo.processInfo.environment["SLEEPTAP_PYTHON"] ?? "/usr/bin/python3"
    static let zoneFlags = ["--time-zone", "America/New_York"]
    /// Tests/Interop, found from this file.
    static let interopDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Interop")
    static let client = interopDirectory.appendingPathComponent("watch_client.py")

    /// The Python client's own events, besides the catalogue's watch events it writes.
    enum ClientEvent: String {
        /// It sent a malformed message on purpose (`--malformed KIND`).
        case malformedSent = "malformed.sent"
    }

    /// Fails (never skips) when `python` cannot import zmq.
    static func requirePyZMQ(sourceLocation: SourceLocation = #_sourceLocation) throws {
        var status: Int32 = -1
        if FileManager.default.isExecutableFile(atPath: python),
            let probe = try? ChildProcess(
                name: "python", executable: URL(fileURLWithPath: python), arguments: ["-c", "import zmq"],
                standardInput: FileHandle.nullDevice)
        {
            if probe.waitForExit(timeout: 30) {
                status = probe.exitStatus ?? -1
            } else {
                probe.stop(signal: SIGKILL)
            }
        }
        // A failure, never a skip: the interop tests are part of the suite.
        try #require(
            status == 0,
            "\(python) cannot import zmq (python3-zmq missing): run scripts/ensure-deps.sh with SLEEPTAP_WITH_PYTHON=1 (scripts/test.sh does), or apt-get install -y python3-zmq",
            sourceLocation: sourceLocation)
        try #require(
            FileManager.default.fileExists(atPath: client.path), "no \(client.path)", sourceLocation: sourceLocation)
    }

    /// Starts the Python watch on the scenario's endpoint. Stop it in a `defer`.
    static func pythonWatch(_ scenario: Scenario, _ extra: [String]) throws -> ChildProcess {
        try ChildProcess(
            name: "python watch", executable: URL(fileURLWithPath: python),
            arguments: ["-B", client.path, scenario.endpoint, "--timeout", "15"] + extra)
    }

    /// Waits for the Python watch to exit; returns its status, recording an issue (with stderr) on timeout.
    static func exitStatus(of client: ChildProcess, sourceLocation: SourceLocation = #_sourceLocation) -> Int32? {
        guard client.waitForExit(timeout: Scenario.deadline) else {
            Issue.record(
                "the Python watch did not exit; stderr:\n\(client.standardError)", sourceLocation: sourceLocation)
            return nil
        }
        return client.exitStatus
    }

    @Test("The Python watch receives the first batch and acks it; the phone gets the ack")
    func firstBatch() throws {
        try Self.requirePyZMQ()
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        try phone.expect(.phoneStarted)
        let client = try Self.pythonWatch(scenario, ["--batches", "1"])
        defer { client.stop(signal: SIGKILL, timeout: 2) }

        try client.expect(.helloSent) { $0.int("lastSeq") == 0 }
        let applied = try client.expect(.batchApplied).event
        #expect(applied.int("seq") == 1)
        #expect(applied.int("count") == 7)
        #expect(applied.string("timeZone") == "America/New_York")
        try client.expect(.ackSent) { $0.int("seq") == 1 }
        let acked = try phone.expect(.ackReceived) { $0.int("seq") == 1 }.event
        // The coverage the Python watch computed is the phone's last wake-up of the batch.
        #expect(acked.string("coverageEnd") == applied.string("coverageEnd"))
        let generated = try phone.expect(.batchGenerated) { $0.int("seq") == 1 }.event
        #expect(generated.string("first") == applied.string("first"))
        #expect(generated.string("last") == applied.string("coverageEnd"))
        #expect(Self.exitStatus(of: client) == 0, "stderr: \(client.standardError)")
        #expect(!client.events.contains { $0.name == .messageRejected })
    }

    @Test("After `open` on the phone the Python watch applies batch 2 and the phone gets its ack")
    func secondBatchAfterOpen() throws {
        try Self.requirePyZMQ()
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        try phone.expect(.phoneStarted)
        let client = try Self.pythonWatch(scenario, ["--batches", "2"])
        defer { client.stop(signal: SIGKILL, timeout: 2) }

        try client.expect(.batchApplied) { $0.int("seq") == 1 }
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        phone.send(line: "open")
        try phone.expect(.batchGenerated) { $0.int("seq") == 2 }
        let applied = try client.expect(.batchApplied) { $0.int("seq") == 2 }.event
        #expect(applied.int("count") == 7)
        try client.expect(.ackSent) { $0.int("seq") == 2 }
        let acked = try phone.expect(.ackReceived) { $0.int("seq") == 2 }.event
        #expect(acked.string("coverageEnd") == applied.string("coverageEnd"))
        #expect(Self.exitStatus(of: client) == 0, "stderr: \(client.standardError)")
        #expect(!client.events.contains { $0.name == .messageRejected })
    }

    @Test("The Python watch's REQUEST wakes the phone's app, whose job answers with batch 2")
    func requestAnswered() throws {
        try Self.requirePyZMQ()
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags + ["--registration", "late-silent"])
        try phone.expect(.phoneStarted)
        let client = try Self.pythonWatch(scenario, ["--batches", "1", "--request"])
        defer { client.stop(signal: SIGKILL, timeout: 2) }

        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        let sent = try client.expect(.requestSent).event
        let received = try phone.expect(.requestReceived) { $0.int("id") == 1 }
        #expect(received.event.int("nightsLeft") == sent.int("nightsLeft"))
        #expect(received.event.string("coverageEnd") == sent.string("coverageEnd"))
        try phone.expect(.osWatchMessage, from: received.index) { $0.fields["woken"] as? Bool == true }
        try phone.expect(.requestServed, from: received.index) { $0.int("seq") == 2 }
        try client.expect(.batchApplied) { $0.int("seq") == 2 }
        try phone.expect(.ackReceived) { $0.int("seq") == 2 }
        #expect(Self.exitStatus(of: client) == 0, "stderr: \(client.standardError)")
        #expect(!client.events.contains { $0.name == .messageRejected })
    }

    @Test(
        "A malformed message from the Python watch gets an ERROR from the phone, and changes nothing",
        arguments: [
            "not-json", "bad-version", "ack-seq-zero", "fraction-int", "wrong-role", "multipart", "request-id-zero",
            "request-too-many-nights", "request-bad-coverage",
        ])
    func malformedMessage(_ kind: String) throws {
        try Self.requirePyZMQ()
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        try phone.expect(.phoneStarted)
        let client = try Self.pythonWatch(scenario, ["--batches", "1", "--malformed", kind])
        defer { client.stop(signal: SIGKILL, timeout: 2) }

        let acked = try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        try client.expect(rawName: ClientEvent.malformedSent.rawValue) { $0.string("kind") == kind }
        let rejected = try phone.expect(.messageRejected, from: acked.index).event
        let sent = try phone.expect(.errorSent, from: acked.index).event
        let reported = try client.expect(.peerError).event
        #expect(reported.string("reason") == sent.string("reason"))
        #expect(rejected.string("reason") == sent.string("reason"))
        #expect(Self.exitStatus(of: client) == 0, "stderr: \(client.standardError)")

        // The phone's outbox is as it was: batch 1, acknowledged.
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus).event
        #expect(status.int("lastSeq") == 1)
        #expect(status.fields["acked"] as? Bool == true)
    }

    @Test(
        "A watch with another routing id is answered with ERROR at every message, and never gets a batch, while the paired watch is served"
    )
    func unknownRoutingID() throws {
        try Self.requirePyZMQ()
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        try phone.expect(.phoneStarted)

        // The Python watch, from the doc alone, is refused and told why.
        let client = try Self.pythonWatch(scenario, ["--id", "intruder", "--batches", "0"])
        defer { client.stop(signal: SIGKILL, timeout: 2) }
        let reported = try client.expect(.peerError).event
        #expect(reported.string("reason")?.contains("unknown peer routing id \"intruder\"") == true, "\(reported)")
        #expect(Self.exitStatus(of: client) == 0, "stderr: \(client.standardError)")
        #expect(!client.events.contains { $0.name == .batchApplied })

        // An intruder that stays connected while the phone serves its paired watch two batches
        // (with resends) and asks again after each: one connection delivers in order, so anything
        // the phone sent it in between arrives before the answer to its next HELLO.
        let context = try Context()
        defer { context.terminate() }
        let intruder = try Socket(context: context, type: .dealer)
        defer { intruder.close() }
        try intruder.setLinger(milliseconds: 0)
        try intruder.setRoutingId(Array("intruder".utf8))
        try intruder.connect(scenario.endpoint)
        /// Sends HELLO; returns what came back up to and including the first ERROR.
        func ask() throws -> [WireMessage] {
            try intruder.send(WireCodec.encode(.hello(nil)))
            var received: [WireMessage] = []
            let deadline = Date().addingTimeInterval(Scenario.deadline)
            while received.last.map({ if case .error = $0 { false } else { true } }) ?? true {
                var items = [PollItem.socket(intruder, events: .readable)]
                let left = Int(max(0, deadline.timeIntervalSinceNow) * 1000)
                try #require(
                    try poll(&items, timeoutMilliseconds: left) == 1, "no answer within \(Scenario.deadline) s")
                let frames = try intruder.receive()
                received.append(try #require(frames.count == 1 ? try? WireCodec.decode(frames[0]) : nil, "\(frames)"))
            }
            return received
        }
        func refusedOnly(_ received: [WireMessage], sourceLocation: SourceLocation = #_sourceLocation) {
            let reasons = received.compactMap { if case .error(let reason) = $0 { reason } else { nil } }
            #expect(
                received.count == 1 && reasons.count == 1, "the intruder got \(received)",
                sourceLocation: sourceLocation)
            #expect(reasons.allSatisfy { $0.contains("unknown peer routing id") }, sourceLocation: sourceLocation)
        }

        refusedOnly(try ask())
        let watch = try scenario.watch()
        try watch.expect(.batchApplied) { $0.int("seq") == 1 }
        refusedOnly(try ask())
        let acked = try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        phone.send(line: "open")
        try watch.expect(.batchApplied) { $0.int("seq") == 2 }
        try phone.expect(.ackReceived, from: acked.index + 1)
        refusedOnly(try ask())
        // Refused at the phone too: the Python watch's HELLO (one, or more if it repeated it) and these three.
        // Repeats of one reason are written once and then counted: the status counts every one.
        #expect(
            phone.events.contains {
                $0.name == .messageRejected && $0.string("reason")?.hasPrefix("unknown peer routing id") == true
            })
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus).event
        #expect(status.int("rejectedMessages") ?? 0 >= 4, "\(status)")
    }

    @Test("The Python watch's own self-tests pass (BATCH validation, watch rules against a fake phone)")
    func clientSelfTests() throws {
        try Self.requirePyZMQ()
        let tests = try ChildProcess(
            name: "python self-tests", executable: URL(fileURLWithPath: Self.python),
            arguments: ["-B", Self.interopDirectory.appendingPathComponent("test_watch_client.py").path])
        defer { tests.stop(signal: SIGKILL, timeout: 2) }
        #expect(Self.exitStatus(of: tests) == 0, "unittest output:\n\(tests.standardError)")
    }
}
