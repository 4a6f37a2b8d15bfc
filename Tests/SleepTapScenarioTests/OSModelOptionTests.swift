// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapRuntime
import Testing

@testable import SleepTapScenario

/// `phone --os-model FILE`: the twin built from the phone's flags runs its iOS OS on a
/// calibration model's fitted wait, as `sleeptap-fleet --os-model` does.
@Suite("phone --os-model")
struct OSModelOptionTests {
    static let clock = ["--clock-start", "2026-07-20T00:00:00Z", "--clock-speed", "3600"]
    static let watch = ["--endpoint", "ipc:///nonexistent/p.sock", "--state-dir", "/nonexistent/w"] + clock

    /// A model whose iOS wait is 10 to 12 h from eligibility to launch, with `n` answered requests.
    static func model(n: Int = 120, platform: String = "ios") -> String {
        """
        {"kind": "sleeptap.calibration", "schemaVersion": 1, "groups": [
          {"group": "\(platform)", "platform": "\(platform)", "bucket": null, "appVersion": null,
           "delay": {"n": \(n), "quantiles": [
             {"p": 0.001, "seconds": 36000}, {"p": 0.5, "seconds": 39600}, {"p": 0.999, "seconds": 43200}]}}]}
        """
    }

    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("model-\(UUID().uuidString).json").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        return path
    }

    /// The waits from each `renew.submitted`'s earliestBeginDate to the next `handler.entered`
    /// in 10 days of a twin made from `phone` flags.
    static func waits(_ phone: [String]) throws -> [TimeInterval] {
        var twin = try TwinBuilder.make(
            phone: ["--endpoint", "ipc:///nonexistent/p.sock", "--state-dir", "/nonexistent/p", "--device-seed", "1"]
                + clock + phone,
            watch: watch, machineZone: TimeZone(identifier: "UTC")!)
        twin.boot()
        twin.run(until: ISO8601.date("2026-07-30T00:00:00Z")!)
        let entered = twin.events(.handlerEntered, from: .phone).map(\.at)
        return twin.events(.renewSubmitted, from: .phone).compactMap { entry -> TimeInterval? in
            guard case .date(let eligible)? = entry.event["earliestBeginDate"],
                let launch = entered.first(where: { $0 > entry.at })
            else { return nil }
            return launch.timeIntervalSince(eligible)
        }
    }

    static func median(_ values: [TimeInterval]) -> TimeInterval {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    @Test("The twin's iOS launches wait the model's 10 to 12 h; without it, legacy's much shorter waits")
    func fittedWait() throws {
        let path = try Self.write(Self.model())
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fitted = try Self.waits(["--os-model", path])
        let builtIn = try Self.waits(["--opportunity-model", "legacy"])
        #expect(fitted.count >= 5 && builtIn.count >= 5, "fitted \(fitted), built-in \(builtIn)")
        #expect(Self.median(fitted) >= 36_000 && Self.median(fitted) <= 43_260, "\(fitted)")
        #expect(Self.median(builtIn) < 6 * 3_600, "\(builtIn)")
    }

    @Test("A model that cannot be used is named with what is wrong: unreadable, not a model, too few requests, Android")
    func unusable() throws {
        func problem(_ phone: [String]) -> String? {
            var options = OSOptions()
            if let index = phone.firstIndex(of: "--os-model") { options.osModelPath = phone[index + 1] }
            if phone.contains("android") { options.platform = .android }
            do {
                try options.loadOSModel()
                return nil
            } catch {
                return error.description
            }
        }
        let few = try Self.write(Self.model(n: 5))
        let android = try Self.write(Self.model(platform: "android"))
        let notModel = try Self.write("{\"kind\": \"something else\"}")
        defer { for path in [few, android, notModel] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(
            problem(["--os-model", "/nonexistent/model.json"])?.hasPrefix("--os-model /nonexistent/model.json: ")
                == true)
        #expect(problem(["--os-model", notModel])?.contains("kind: expected \"sleeptap.calibration\"") == true)
        #expect(problem(["--os-model", few])?.contains("no iOS group with 20 or more answered requests") == true)
        #expect(problem(["--os-model", android])?.contains("no iOS group") == true)
        let good = try Self.write(Self.model())
        defer { try? FileManager.default.removeItem(atPath: good) }
        #expect(problem(["--os-model", good, "--platform", "android"])?.contains("an Android phone keeps") == true)
        #expect(problem(["--os-model", good]) == nil)
    }

    @Test("In a scenario file a relative --os-model (as --tzdata) is the scenario directory's")
    func relativeToTheScenario() {
        let flags = ScenarioFile.resolvingPaths(
            ["--os-model", "model.json", "--tzdata=tz/2025b", "--os-model=/abs/m.json"],
            against: URL(fileURLWithPath: "/scenarios/mine"))
        #expect(
            flags == [
                "--os-model", "/scenarios/mine/model.json", "--tzdata=/scenarios/mine/tz/2025b",
                "--os-model=/abs/m.json",
            ])
    }
}
