// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// A package of its own that uses SleepTap's SleepTapEmbedded, SleepTapCore and SleepTapOS library products,
// as another project would: by path here; by URL and version in a project of yours.
import PackageDescription

let package = Package(
    name: "twin-month",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` gives the dependency the name the products below refer to. Without it, SwiftPM
        // names a path dependency after its directory (a clone in `sleeptap-main/` is
        // "sleeptap-main"), and `package: "SleepTap"` is not found.
        .package(name: "SleepTap", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "twin-month",
            dependencies: [
                .product(name: "SleepTapEmbedded", package: "SleepTap"),
                .product(name: "SleepTapCore", package: "SleepTap"),
                .product(name: "SleepTapOS", package: "SleepTap"),
            ]
        )
    ]
)
