// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapFleet

/// One fleet per output directory (`FleetOutput`): the same run again may write there, another
/// may not, so a report never reads two fleets as one.
@Suite("One fleet per output directory")
struct FleetOutputTests {
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-output-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func options(seed: UInt64 = 1) -> FleetOptions {
        var options = FleetOptions(devices: 20, days: 7, start: LocalDate(parsing: "2026-03-02")!)
        options.seed = seed
        return options
    }

    static func addRecord(_ root: String) throws {
        try FileManager.default.createDirectory(
            atPath: root + "/" + RunRecordFile.directory, withIntermediateDirectories: true)
        try Data("[]".utf8).write(to: URL(fileURLWithPath: root + "/" + RunRecordFile.directory + "/device-0.json"))
    }

    @Test(
        "An empty directory takes any run; then the same fleet again or another shard of it, but not another seed or a strategy's batch"
    )
    func sameRunOnly() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FleetOutput.claim(root: root, options: Self.options())
        try Self.addRecord(root)
        try FleetOutput.claim(root: root, options: Self.options())
        var shard = Self.options()
        (shard.shardIndex, shard.shardCount) = (1, 2)
        try FleetOutput.claim(root: root, options: shard)
        var horizon = Self.options()
        horizon.horizonDays = 14
        for other in [Self.options(seed: 2), horizon] {
            #expect(throws: FleetOutput.Refusal.self) { try FleetOutput.claim(root: root, options: other) }
        }
        // The refusal names the options that differ, the directory's first.
        do {
            try FleetOutput.claim(root: root, options: horizon)
        } catch {
            #expect(error.description.contains("a fleet of other options (horizonDays 7, not 14)"), "\(error)")
        }
        // The refused runs left the manifest as it was: the first run may still go on.
        try FleetOutput.claim(root: root, options: Self.options())
    }

    @Test("Records with no manifest beside them are refused, naming the directory and how many files it holds")
    func unknownRecords() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Self.addRecord(root)
        do {
            try FleetOutput.claim(root: root, options: Self.options())
            Issue.record("records of no known run were accepted")
        } catch {
            #expect(error.description.contains("\(root)/metrics/bg_runs already holds 1 file,"), "\(error)")
            #expect(error.description.contains("no readable fleet-run.json"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/metrics/" + FleetOutput.manifestName))
        // A manifest that is there but not this tool's JSON is named as such, and left as it is.
        let manifest = root + "/metrics/" + FleetOutput.manifestName
        try Data("not json\n".utf8).write(to: URL(fileURLWithPath: manifest))
        do {
            try FleetOutput.claim(root: root, options: Self.options())
            Issue.record("records beside a bad manifest were accepted")
        } catch {
            #expect(error.description.contains("fleet-run.json beside them names no fleet's options"), "\(error)")
        }
        #expect(FileManager.default.contents(atPath: manifest) == Data("not json\n".utf8))
    }

    @Test("The signature is the same for the same options and differs when an option that changes the records does")
    func signature() {
        var other = Self.options()
        other.lowPower = 0.3
        #expect(FleetOutput.signature(of: Self.options()) == FleetOutput.signature(of: Self.options()))
        #expect(FleetOutput.signature(of: Self.options()) != FleetOutput.signature(of: other))
    }

    @Test("Every option of the fleet is in the signature but the shard, the model value and its path")
    func signatureNamesEveryOption() {
        let signature = FleetOutput.signature(of: Self.options())
        let left = ["shardIndex", "shardCount", "osModel", "osModelFile"]
        for case let label? in Mirror(reflecting: Self.options()).children.map(\.label) where !left.contains(label) {
            #expect(
                signature.contains(" \(label)=") || signature.hasPrefix("\(label)="), "\(label) is not in \(signature)")
        }
    }
}
