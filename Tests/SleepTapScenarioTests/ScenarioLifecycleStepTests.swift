// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapEmbedded
import Testing

@testable import SleepTapScenario

/// The steps that start, restart and kill the phone or the watch (docs/scenarios.md, "Steps"),
/// and the rule that a step for a process that is not running is an error.
@Suite("scenario start, restart and kill steps")
struct ScenarioLifecycleStepTests {
    /// The default scenario of `ScenarioFileTests` (Asia/Shanghai, 20 to 25 July 2026, bed at
    /// 23:00, wake-up at 07:00) with these steps and expectations.
    static func file(_ steps: [[String: Any]], expect: [[String: Any]] = []) throws -> ScenarioFile {
        let data = try ScenarioFileTests.scenario {
            $0["steps"] = steps
            $0["expect"] = expect
        }
        return try ScenarioFile.decode(data, path: "s.json")
    }

    /// The twin's run of those steps.
    static func twin(_ steps: [[String: Any]]) throws -> ScenarioRun {
        try ScenarioRun.twin(try file(steps))
    }

    static func events(_ run: ScenarioRun, _ name: EventName, from: String? = nil) -> [ScenarioRun.LogEntry] {
        let after = from.flatMap(ISO8601.date) ?? .distantPast
        return run.log.filter { $0.event.name == name && $0.at >= after }
    }

    @Test(
        "A phone restart in the twin is a start on the stored OS, as the process's: phone.started says osState stored, and the command line's --registration is applied again (an update)"
    )
    func restartAppliesTheFlags() throws {
        let data = try ScenarioFileTests.scenario {
            $0["phone"] = ["--platform", "ios", "--opportunity-model", "legacy", "--registration", "late-silent"]
            $0["steps"] = [
                ["at": "2026-07-21T02:00:00Z", "phone": "registration early"],
                ["at": "2026-07-21T03:00:00Z", "phone": "open"],
                ["at": "2026-07-23T02:00:00Z", "restart": "phone"],
            ]
            $0["expect"] = []
        }
        let run = try ScenarioRun.twin(try ScenarioFile.decode(data, path: "s.json"))
        let started = Self.events(run, .phoneStarted).map { [$0.event["osState"], $0.event["registration"]] }
        #expect(
            started == [
                [.string("new"), .string("late-silent")], [.string("stored"), .string("late-silent")],
            ])
        // Between the stdin update and the restart the handler is entered; after it, never.
        #expect(!Self.events(run, .handlerEntered, from: "2026-07-21T03:00:00Z").isEmpty)
        #expect(Self.events(run, .handlerEntered, from: "2026-07-23T02:00:00Z").isEmpty)
    }

    @Test("each new step decodes to its twin step, with fresh for start and restart, and reads back as written")
    func decodes() throws {
        let file = try Self.file([
            ["at": "2026-07-21T00:00:00Z", "kill": "phone"],
            ["at": "2026-07-21T01:00:00Z", "start": "phone"],
            ["at": "2026-07-21T02:00:00Z", "restart": "phone", "fresh": true],
            ["at": "2026-07-21T03:00:00Z", "restart": "watch"],
            ["at": "2026-07-21T04:00:00Z", "kill": "watch"],
            ["at": "2026-07-21T05:00:00Z", "start": "watch", "fresh": true],
            ["at": "2026-07-21T06:00:00Z", "phone": "quit"],
            ["at": "2026-07-21T07:00:00Z", "start": "phone", "fresh": false],
            ["at": "2026-07-21T08:00:00Z", "watch": "quit"],
            ["at": "2026-07-21T09:00:00Z", "start": "watch"],
        ])
        #expect(
            file.steps.map(\.text) == [
                "kill: phone", "start: phone", "restart: phone, fresh", "restart: watch", "kill: watch",
                "start: watch, fresh", "phone: quit", "start: phone", "watch: quit", "start: watch",
            ])
        let kinds: [String] = file.steps.map {
            switch $0.step {
            case .killPhone: "killPhone"
            case .killWatch: "killWatch"
            case .startPhone(let keep): "startPhone(\(keep))"
            case .startWatch(let keep): "startWatch(\(keep))"
            case .restartPhone(let keep): "restartPhone(\(keep))"
            case .restartWatch(let keep): "restartWatch(\(keep))"
            case .phone(let line): "phone(\(line))"
            case .watch(let line): "watch(\(line))"
            default: "other"
            }
        }
        #expect(
            kinds == [
                "killPhone", "startPhone(true)", "restartPhone(false)", "restartWatch(true)", "killWatch",
                "startWatch(false)", "phone(quit)", "startPhone(true)", "watch(quit)", "startWatch(true)",
            ])
    }

    /// Each refused step list: what it is, the field the error names, and words of its reason.
    static var refused: [(label: String, steps: [[String: Any]], field: String, reason: String)] {
        [
            (
                "a phone line after phone: quit",
                [["at": "2026-07-21T00:00:00Z", "phone": "quit"], ["at": "2026-07-21T01:00:00Z", "phone": "open"]],
                "steps[1].phone", "the phone is not running (steps[0] (phone: quit) stopped it)"
            ),
            (
                "a watch line after kill: watch",
                [["at": "2026-07-21T00:00:00Z", "kill": "watch"], ["at": "2026-07-21T01:00:00Z", "watch": "bed"]],
                "steps[1].watch", "the watch is not running (steps[0] (kill: watch) stopped it)"
            ),
            (
                "a restart of a killed phone",
                [
                    ["at": "2026-07-21T00:00:00Z", "kill": "phone"],
                    ["at": "2026-07-21T01:00:00Z", "restart": "phone"],
                ],
                "steps[1].restart", "the phone is not running"
            ),
            (
                "a kill of a phone that quit",
                [["at": "2026-07-21T00:00:00Z", "phone": "quit"], ["at": "2026-07-21T01:00:00Z", "kill": "phone"]],
                "steps[1].kill", "the phone is not running"
            ),
            (
                "a link step does not revive: a watch line after watch: quit and link",
                [
                    ["at": "2026-07-21T00:00:00Z", "watch": "quit"], ["at": "2026-07-21T01:00:00Z", "link": "down"],
                    ["at": "2026-07-21T02:00:00Z", "watch": "status"],
                ],
                "steps[2].watch", "the watch is not running (steps[0] (watch: quit) stopped it)"
            ),
            (
                "a start of a running phone", [["at": "2026-07-21T00:00:00Z", "start": "phone"]], "steps[0].start",
                "the phone is running"
            ),
            (
                "a start of a watch that was started again",
                [
                    ["at": "2026-07-21T00:00:00Z", "kill": "watch"], ["at": "2026-07-21T01:00:00Z", "start": "watch"],
                    ["at": "2026-07-21T02:00:00Z", "start": "watch"],
                ],
                "steps[2].start", "the watch is running"
            ),
            (
                "a process neither phone nor watch", [["at": "2026-07-21T00:00:00Z", "kill": "tablet"]],
                "steps[0].kill",
                "expected phone or watch"
            ),
            (
                "fresh on a kill", [["at": "2026-07-21T00:00:00Z", "kill": "phone", "fresh": true]], "steps[0].fresh",
                "only a start or restart step"
            ),
            (
                "fresh not a boolean", [["at": "2026-07-21T00:00:00Z", "restart": "phone", "fresh": "yes"]],
                "steps[0].fresh", "expected true"
            ),
            (
                "fresh as 1", [["at": "2026-07-21T00:00:00Z", "restart": "watch", "fresh": 1]], "steps[0].fresh",
                "expected true"
            ),
            (
                "a restart and a line in one step",
                [["at": "2026-07-21T00:00:00Z", "restart": "phone", "phone": "open"]], "steps[0]",
                "give exactly one of phone, watch, link, start, restart or kill"
            ),
        ]
    }

    @Test(
        "a step for a stopped process, a start of a running one and a malformed new step: exit 65 naming the step",
        arguments: refused.indices)
    func refusedSteps(index: Int) throws {
        let (label, steps, field, reason) = Self.refused[index]
        do {
            _ = try Self.file(steps)
            Issue.record("\(label): accepted")
        } catch let error as ScenarioError {
            #expect(error.field == field, "\(label): \(error)")
            #expect(error.reason.contains(reason), "\(label): \(error)")
            #expect(error.file == "s.json")
        }
    }

    @Test("a step the load check did not see coming (a file edited after load) fails the twin's run, naming it")
    func notRunningAtRunTime() throws {
        var file = try Self.file([["at": "2026-07-21T00:00:00Z", "phone": "quit"]])
        let open = try Self.file([["at": "2026-07-21T01:00:00Z", "phone": "open"]]).steps
        file.steps += open
        do {
            _ = try ScenarioRun.twin(file)
            Issue.record("a line for a phone that quit ran silently")
        } catch {
            #expect(error.field == "steps[1]")
            #expect(error.value == "phone: open")
            #expect(error.reason.contains("the phone was not running in the twin at 2026-07-21T01:00:00Z"), "\(error)")
        }
    }

    @Test("restart keeps the phone's numbering; restart with fresh starts a new epoch at seq 1, and the watch takes it")
    func restartWithAndWithoutState() throws {
        let restart = "2026-07-22T02:00:00Z"
        let kept = try Self.twin([["at": restart, "restart": "phone"]])
        let fresh = try Self.twin([["at": restart, "restart": "phone", "fresh": true]])
        let before = try #require(Self.events(kept, .batchGenerated).last { $0.at < ISO8601.date(restart)! })
        guard case .int(let lastSeq)? = before.event["seq"] else {
            Issue.record("batch.generated without a seq")
            return
        }
        #expect(lastSeq >= 2, "\(before.event.jsonLine(time: before.at, process: .phone))")

        let keptStart = try #require(Self.events(kept, .phoneStarted, from: restart).first)
        #expect(keptStart.event["lastSeq"] == .int(lastSeq))
        let keptNext = try #require(Self.events(kept, .batchGenerated, from: restart).first)
        #expect(keptNext.event["seq"] == .int(lastSeq + 1))
        #expect(keptNext.event["epoch"] == before.event["epoch"])
        #expect(Self.events(kept, .batchApplied).allSatisfy { $0.event["epochChanged"] == .bool(false) })

        let freshStart = try #require(Self.events(fresh, .phoneStarted, from: restart).first)
        #expect(freshStart.event["lastSeq"] == .int(0))
        let freshNext = try #require(Self.events(fresh, .batchGenerated, from: restart).first)
        #expect(freshNext.event["seq"] == .int(1))
        #expect(freshNext.event["epoch"] != before.event["epoch"])
        let applied = try #require(Self.events(fresh, .batchApplied, from: restart).first)
        #expect(applied.event["epochChanged"] == .bool(true))
        #expect(applied.event["epoch"] == freshNext.event["epoch"])
        // The same nights either way: the watch is covered across both restarts.
        #expect(
            kept.nights.allSatisfy { $0.outcome != .manualEntry }
                && fresh.nights.allSatisfy { $0.outcome != .manualEntry })
    }

    @Test(
        "kill is abrupt: no phone.stopping or watch.stopping, the watch sees the link drop; quit and restart stop cleanly"
    )
    func killAgainstQuit() throws {
        let run = try Self.twin([
            ["at": "2026-07-21T02:00:00Z", "kill": "phone"],
            ["at": "2026-07-21T04:00:00Z", "start": "phone"],
            ["at": "2026-07-22T02:00:00Z", "kill": "watch"],
            ["at": "2026-07-22T04:00:00Z", "start": "watch"],
            ["at": "2026-07-23T02:00:00Z", "restart": "watch"],
            ["at": "2026-07-23T03:00:00Z", "phone": "quit"],
            ["at": "2026-07-23T05:00:00Z", "start": "phone"],
        ])
        #expect(Self.events(run, .phoneStopping).map { ISO8601.string($0.at) } == ["2026-07-23T03:00:00Z"])
        #expect(Self.events(run, .watchStopping).map { ISO8601.string($0.at) } == ["2026-07-23T02:00:00Z"])
        #expect(Self.events(run, .phoneStarted).count == 3)
        #expect(Self.events(run, .watchStarted).count == 3)
        let drops = run.log.filter { $0.event.name == .linkDown && $0.source == .watch }.map { ISO8601.string($0.at) }
        #expect(drops.contains("2026-07-21T02:00:00Z"), "\(drops)")
        // Nothing from a killed process until its start.
        #expect(
            !run.log.contains {
                $0.source == .phone && $0.at > ISO8601.date("2026-07-21T02:00:00Z")!
                    && $0.at < ISO8601.date("2026-07-21T04:00:00Z")!
            })
        #expect(
            !run.log.contains {
                $0.source == .watch && $0.at > ISO8601.date("2026-07-22T02:00:00Z")!
                    && $0.at < ISO8601.date("2026-07-22T04:00:00Z")!
            })
        // The watch kept its batch across the kill: started with it, no fallback.
        let watchStart = try #require(Self.events(run, .watchStarted, from: "2026-07-22T04:00:00Z").first)
        #expect(
            watchStart.event["lastSeq"] != .int(0), "\(watchStart.event.jsonLine(time: watchStart.at, process: .watch))"
        )
        #expect(run.nights.allSatisfy { $0.outcome != .manualEntry }, "\(run.nights)")
    }

    @Test("the twin: a line for a stopped phone does nothing and is listed in misdirected; a start while one runs too")
    func twinMisdirected() throws {
        let file = try Self.file([])
        let lines = ScenarioRun.commandLines(
            file, speed: ScenarioRun.defaultSpeed, phoneEndpoint: "ipc:///x/p.sock", watchEndpoint: "ipc:///x/p.sock",
            directory: "/x", schedulePath: nil)
        var twin = try ScenarioRun.makeTwin(file, phone: lines.phone, watch: lines.watch)
        twin.boot()
        let start = file.start
        twin.schedule(.startPhone(keepState: true), at: start.addingTimeInterval(60))
        twin.schedule(.killWatch, at: start.addingTimeInterval(120))
        twin.schedule(.watch("status"), at: start.addingTimeInterval(180))
        twin.schedule(.killWatch, at: start.addingTimeInterval(240))
        twin.schedule(.startWatch(keepState: true), at: start.addingTimeInterval(300))
        twin.schedule(.watch("status"), at: start.addingTimeInterval(360))
        twin.run(until: start.addingTimeInterval(3_600))
        #expect(twin.misdirected.map(\.index) == [0, 2, 3])
        #expect(twin.misdirected.map(\.running) == [true, false, false])
        #expect(twin.misdirected.map(\.process) == [.phone, .watch, .watch])
        #expect(twin.events(.cacheStatus).map(\.at) == [start.addingTimeInterval(360)])
    }
}
