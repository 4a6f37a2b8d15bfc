// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ZeroMQ

/// A wait in a test ran out of time.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `body` with a fresh directory under the temporary directory, removed on every path.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("zmqtests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url.path)
}

/// Runs `body` with a fresh context, terminated on every path. Sockets made inside must be closed
/// by then (use `makeSocket` and `defer { socket.close() }`).
func withContext<Result>(_ body: (Context) throws -> Result) throws -> Result {
    let context = try Context()
    defer { context.terminate() }
    return try body(context)
}

/// A socket with LINGER 0, so that a failing test never hangs in `Context.terminate()`.
func makeSocket(_ context: Context, _ type: SocketType) throws -> Socket {
    let socket = try Socket(context: context, type: type)
    try socket.setLinger(milliseconds: 0)
    return socket
}

/// Waits up to `timeoutMilliseconds` for a message, then receives it without blocking.
func receive(_ socket: Socket, timeoutMilliseconds: Int = 2_000) throws -> [[UInt8]] {
    var items = [PollItem.socket(socket, events: .readable)]
    guard try ZeroMQ.poll(&items, timeoutMilliseconds: timeoutMilliseconds) == 1 else {
        throw TimedOut(what: "a message on \(socket.type)")
    }
    return try socket.receive(dontWait: true)
}

/// Whether a message is waiting, checking without waiting.
func hasMessage(_ socket: Socket) throws -> Bool {
    var items = [PollItem.socket(socket, events: .readable)]
    return try ZeroMQ.poll(&items, timeoutMilliseconds: 0) == 1
}

/// UTF-8 bytes of a string.
func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// An endpoint for a transport, unique to this call.
func uniqueEndpoint(_ transport: String, in directory: String) -> String {
    switch transport {
    case "ipc": "ipc://\(directory)/\(UUID().uuidString.prefix(8)).sock"
    default: "inproc://test-\(UUID().uuidString)"
    }
}

/// Milliseconds in a `Duration`.
func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
}
