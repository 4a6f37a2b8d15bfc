// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
package import SleepTapRuntime

/// Runs a fleet's devices on the embedded twin, one device per task on all cores, and writes
/// each device's run records under the output root (docs/fleet.md).
package enum FleetRun {
    /// What a run did, for the summary.
    package struct Summary: Equatable, Sendable {
        /// Devices simulated (this shard's).
        package var devices = 0
        package var deviceDays = 0
        /// Run records written, and the files that hold them.
        package var records = 0
        package var files = 0
        /// Records by kind.
        package var submitted = 0
        package var submitFailed = 0
        package var background = 0
        package var backgroundSucceeded = 0
        package var dropped = 0
        package var foreground = 0
        /// Wall seconds the run took.
        package var seconds = 0.0

        package init() {}

        /// Successful background runs ÷ requests (`submitted` and `submitFailed`), as the weekly
        /// report's execution rate (docs/metrics.md); nil without a request.
        package var executionRate: Double? {
            submitted + submitFailed == 0 ? nil : Double(backgroundSucceeded) / Double(submitted + submitFailed)
        }

        /// Simulated device-days per wall second.
        package var deviceDaysPerSecond: Double { seconds > 0 ? Double(deviceDays) / seconds : 0 }

        mutating func add(_ other: Summary) {
            devices += other.devices
            deviceDays += other.deviceDays
            records += other.records
            files += other.files
            submitted += other.submitted
            submitFailed += other.submitFailed
            background += other.background
            backgroundSucceeded += other.backgroundSucceeded
            dropped += other.dropped
            foreground += other.foreground
        }

        /// The counts of one device's records.
        init(device records: [RunRecord], days: Int) {
            devices = 1
            deviceDays = days
            self.records = records.count
            files = Set(records.map { RunRecordFile.fileName(device: $0.device, day: $0.at) }).count
            for record in records {
                switch record.kind {
                case .submitted: submitted += 1
                case .submitFailed: submitFailed += 1
                case .background:
                    background += 1
                    if record.success == true { backgroundSucceeded += 1 }
                case .dropped: dropped += 1
                case .foreground: foreground += 1
                case .push: break  // only `sleeptap-compare`'s push strategies run pushes; it tallies its own
                }
            }
        }
    }

    /// Simulates this shard's devices and writes their records with `writer` (each file
    /// written once, atomically), and with `FleetOptions.watchNights` their watches' nights
    /// (`WatchNight.write`).
    /// - Parameters:
    ///   - jobs: devices simulated at once (the number of cores).
    ///   - progress: called on the calling task after each device with (done, total).
    /// - Throws: `FileError` naming the file or directory that could not be written (the run
    ///   stops; the files written so far stay).
    package static func run(
        _ options: FleetOptions, writer: RunRecordWriter, jobs: Int, progress: (Int, Int) -> Void = { _, _ in }
    ) async throws(FileError) -> Summary {
        let clock = ContinuousClock()
        let begin = clock.now
        try writer.prepare()
        let indices = Array(options.shardDevices)
        let result: Result<Summary, FileError> = await withTaskGroup(of: Result<Summary, FileError>.self) { group in
            var next = 0
            func start() {
                guard next < indices.count else { return }
                let index = indices[next]
                next += 1
                group.addTask {
                    let device = FleetDevice(index: index, options: options)
                    let records: [RunRecord]
                    var nights: [WatchNight] = []
                    if options.watchNights {
                        let outcome = device.simulate(options)
                        records = outcome.records
                        nights = outcome.nights
                    } else {
                        records = device.run(options)
                    }
                    do throws(FileError) {
                        try writer.write(records, durable: false)
                        if options.watchNights { try WatchNight.write(nights, root: writer.root) }
                    } catch {
                        return .failure(error)
                    }
                    return .success(Summary(device: records, days: options.days))
                }
            }
            for _ in 0..<max(1, jobs) { start() }
            var total = Summary()
            var done = 0
            while let outcome = await group.next() {
                switch outcome {
                case .success(let device): total.add(device)
                case .failure(let error):
                    group.cancelAll()
                    return .failure(error)
                }
                done += 1
                progress(done, indices.count)
                start()
            }
            return .success(total)
        }
        var summary = try result.get()
        let elapsed = clock.now - begin
        summary.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return summary
    }
}
