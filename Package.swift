// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// SleepTap toolkit: the phone/watch half of a sleep app, two processes over ZeroMQ,
// with a sans-I/O core that also runs in-process for deterministic simulation.
import PackageDescription

let package = Package(
    name: "SleepTap",
    // Tested on Debian 12 (x86_64) with Swift 6.3 only. macOS 15 is the floor the toolchain's
    // Synchronization module (Mutex) sets; macOS is declared, not tested (README, "Platforms").
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "phone", targets: ["phone"]),
        .executable(name: "watch", targets: ["watch"]),
        .executable(name: "sleeptap-demo", targets: ["sleeptap-demo"]),
        .executable(name: "sleeptap-soak", targets: ["sleeptap-soak"]),
        .executable(name: "sleeptap-scenario", targets: ["sleeptap-scenario"]),
        .executable(name: "sleeptap-bench", targets: ["sleeptap-bench"]),
        .executable(name: "sleeptap-report", targets: ["sleeptap-report"]),
        .executable(name: "sleeptap-fleet", targets: ["sleeptap-fleet"]),
        .executable(name: "sleeptap-calibrate", targets: ["sleeptap-calibrate"]),
        .executable(name: "sleeptap-compare", targets: ["sleeptap-compare"]),
        .library(name: "SleepTapCore", targets: ["SleepTapCore"]),
        .library(name: "SleepTapOS", targets: ["SleepTapOS"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "SleepTapEmbedded", targets: ["SleepTapEmbedded"]),
    ],
    targets: [
        // libzmq through a [system] module map; pkg-config finds the paths. The providers are what
        // SwiftPM suggests when pkg-config cannot find libzmq: apt on Debian, Homebrew on macOS.
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"]), .brew(["zeromq"])]
        ),
        // Thin Swift wrapper over libzmq: context, sockets, frames, poll, options, errors.
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        // Pure domain: schedules, calendar maths, wire protocol, sync state machines. No I/O.
        // The simulated phone OS: BGTaskScheduler and WorkManager rules in virtual time, seeded,
        // sans-I/O, knowing nothing of the sleep app (docs/scheduler.md).
        .target(name: "SleepTapOS"),
        .target(name: "SleepTapCore", dependencies: ["SleepTapOS"]),
        // The embedded twin: the same nodes in one process, a virtual-time timer heap, an
        // in-memory link with seeded faults and stores that fail on demand. No I/O.
        .target(name: "SleepTapEmbedded", dependencies: ["SleepTapCore", "SleepTapOS"]),
        // Linux process calls Swift cannot import (prctl(2) is variadic), as static inline shims.
        .systemLibrary(name: "CLinuxProcess"),
        // The argument reader every executable parses its command line with (Foundation only).
        .target(name: "SleepTapCommandLine"),
        // Adapters at the edge: ZeroMQ transport, files, stdin, signals, phone and watch options.
        .target(
            name: "SleepTapRuntime",
            dependencies: [
                "SleepTapCalibration", "SleepTapCommandLine", "SleepTapCore", "SleepTapOS", "ZeroMQ", "CLinuxProcess",
            ]),
        .executableTarget(name: "phone", dependencies: ["SleepTapRuntime"]),
        .executableTarget(name: "watch", dependencies: ["SleepTapRuntime"]),
        // Spawns the executables and reads their JSON Lines events (demo and integration tests).
        .target(name: "SleepTapProcess", dependencies: ["SleepTapCommandLine", "SleepTapCore"]),
        .executableTarget(
            name: "sleeptap-demo", dependencies: ["SleepTapCommandLine", "SleepTapCore", "SleepTapProcess"]),
        // Seeded fault matrix: kills, pauses, restarts and handovers of real phone/watch processes;
        // and the date-exhaustion soak: random scenario timelines in the twin, checked night by night.
        .executableTarget(
            name: "sleeptap-soak",
            dependencies: [
                "SleepTapCommandLine", "SleepTapCore", "SleepTapOS", "SleepTapProcess", "SleepTapRuntime",
                "SleepTapScenario",
            ]),
        // Scenario files and their runs in the twin, which is built from the executables' own flags.
        .target(
            name: "SleepTapScenario",
            dependencies: ["SleepTapCore", "SleepTapEmbedded", "SleepTapOS", "SleepTapProcess", "SleepTapRuntime"]),
        .executableTarget(
            name: "sleeptap-scenario",
            dependencies: [
                "SleepTapCommandLine", "SleepTapCore", "SleepTapProcess", "SleepTapRuntime", "SleepTapScenario",
            ]),
        // The floor the bench measures against: the same echo and atomic writes in plain C on libzmq.
        .executableTarget(name: "sleeptap-bench-baseline", dependencies: ["CZeroMQ"]),
        // Ratios to that floor, measured in one interleaved run; builds the baseline, phone, watch
        // and sleeptap-report with it (`swift run -c release sleeptap-bench`).
        .executableTarget(
            name: "sleeptap-bench",
            dependencies: [
                "SleepTapCommandLine", "SleepTapCore", "SleepTapEmbedded", "SleepTapOS", "SleepTapProcess", "ZeroMQ",
                "sleeptap-bench-baseline", "phone", "watch", "sleeptap-report",
            ]),
        // The weekly freshness report over run records (docs/metrics.md): reads metrics/bg_runs,
        // writes one Markdown file atomically.
        .executableTarget(
            name: "sleeptap-report",
            dependencies: ["SleepTapCommandLine", "SleepTapCore", "SleepTapProcess", "SleepTapRuntime"]),
        // Simulated fleets of devices on the twin, and the twin's speed workload.
        .target(
            name: "SleepTapFleet",
            dependencies: [
                "SleepTapCalibration", "SleepTapCommandLine", "SleepTapCore", "SleepTapEmbedded", "SleepTapOS",
                "SleepTapRuntime",
            ]),
        .executableTarget(
            name: "sleeptap-fleet",
            dependencies: [
                "SleepTapCalibration", "SleepTapCommandLine", "SleepTapCore", "SleepTapFleet", "SleepTapProcess",
                "SleepTapRuntime",
            ]),
        // The same fleet under several refresh strategies (docs/fleet.md); its logic is in
        // SleepTapFleet.
        .executableTarget(
            name: "sleeptap-compare",
            dependencies: [
                "SleepTapCalibration", "SleepTapCommandLine", "SleepTapCore", "SleepTapFleet", "SleepTapProcess",
                "SleepTapRuntime",
            ]),
        // Fits the simulated OS to run records (docs/calibration.md): the fit, sans-I/O, and its
        // executable, which reads metrics/bg_runs as the report does.
        .target(name: "SleepTapCalibration", dependencies: ["SleepTapCore", "SleepTapOS"]),
        .executableTarget(
            name: "sleeptap-calibrate",
            dependencies: [
                "SleepTapCalibration", "SleepTapCommandLine", "SleepTapCore", "SleepTapProcess", "SleepTapRuntime",
            ]),

        // Test support shared by the test targets: tz databases built with zic.
        .target(name: "SleepTapTestFixtures", dependencies: ["SleepTapCore"], path: "Tests/SleepTapTestFixtures"),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        // Test support for the simulated OS's tests (its own, so SleepTapOSTests need no SleepTapCore).
        .target(name: "SleepTapOSTestFixtures", dependencies: ["SleepTapOS"], path: "Tests/SleepTapOSTestFixtures"),
        .testTarget(name: "SleepTapOSTests", dependencies: ["SleepTapOS", "SleepTapOSTestFixtures"]),
        .testTarget(
            name: "SleepTapCoreTests",
            dependencies: ["SleepTapCore", "SleepTapOS", "SleepTapOSTestFixtures", "SleepTapTestFixtures"]),
        .testTarget(
            name: "SleepTapRuntimeTests",
            dependencies: ["SleepTapCommandLine", "SleepTapOS", "SleepTapRuntime", "SleepTapTestFixtures"]),
        // The argument reader, and the demo's and the soak's parsers (in their executables).
        .testTarget(
            name: "SleepTapCommandLineTests",
            dependencies: ["SleepTapCommandLine", "SleepTapCore", "sleeptap-demo", "sleeptap-soak"]),
        .testTarget(
            name: "SleepTapScenarioTests",
            dependencies: ["SleepTapCore", "SleepTapOS", "SleepTapScenario", "SleepTapTestFixtures"]),
        .testTarget(name: "SleepTapEmbeddedTests", dependencies: ["SleepTapEmbedded", "SleepTapCore", "SleepTapOS"]),
        .testTarget(
            name: "SleepTapFleetTests",
            dependencies: [
                "SleepTapCalibration", "SleepTapCommandLine", "SleepTapCore", "SleepTapFleet", "SleepTapOS",
                "SleepTapRuntime",
            ]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "SleepTapCommandLine", "SleepTapCore", "SleepTapEmbedded", "SleepTapFleet", "SleepTapOS",
                "SleepTapProcess", "SleepTapRuntime", "ZeroMQ", "phone", "watch",
                "sleeptap-demo", "sleeptap-soak", "SleepTapScenario", "sleeptap-scenario", "sleeptap-bench",
                "sleeptap-report", "sleeptap-fleet", "sleeptap-calibrate", "sleeptap-compare", "SleepTapTestFixtures",
            ],
            exclude: ["Fixtures"]
        ),
    ]
)

// Strict settings for every Swift target, from one place (as swift-log does).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
