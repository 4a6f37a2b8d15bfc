// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// A package of its own that uses SleepTap's ZeroMQ library product, as another project would:
// by path here; by URL and version in a project of yours.
import PackageDescription

let package = Package(
    name: "zeromq-roundtrip",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SleepTap", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "zeromq-roundtrip",
            dependencies: [.product(name: "ZeroMQ", package: "SleepTap")]
        )
    ]
)
