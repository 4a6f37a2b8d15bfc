// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

/// Facts about the libzmq in use.
public enum ZeroMQLibrary {
    /// The version of the libzmq loaded at run time (`zmq_version`), e.g. 4.3.4.
    public static var version: (major: Int, minor: Int, patch: Int) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }

    /// The version of the `zmq.h` this module was compiled against (`ZMQ_VERSION`).
    public static var headerVersion: (major: Int, minor: Int, patch: Int) {
        let packed = Int(CZeroMQ_headerVersion())
        return (packed / 10_000, packed / 100 % 100, packed % 100)
    }

    /// Whether libzmq was built with a capability (`zmq_has`).
    ///
    /// - Parameter capability: `"ipc"`, `"pgm"`, `"tipc"`, `"norm"`, `"curve"`, `"gssapi"` or
    ///   `"draft"`.
    /// - Returns: `true` if available. Debian's 4.3.4 has ipc and curve, not draft.
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }
}
