// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

/// A CURVE key pair as two 40-character Z85 strings (`zmq_curve_keypair`).
///
/// `description` shows only the public key, so the secret does not end up in logs.
public struct CurveKeyPair: Sendable, Equatable, CustomStringConvertible {
    /// The public key, 40 Z85 characters; give it to peers.
    public let publicKey: String

    /// The secret key, 40 Z85 characters; keep it private.
    public let secretKey: String

    /// Wraps a key pair.
    ///
    /// - Parameters:
    ///   - publicKey: 40 Z85 characters.
    ///   - secretKey: 40 Z85 characters.
    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Generates a new key pair (`zmq_curve_keypair`).
    ///
    /// - Returns: The pair.
    /// - Throws: `ZeroMQError.notSupported` if libzmq was built without CURVE.
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        try valueOrZeroMQError { zmq_curve_keypair(&publicKey, &secretKey) }
        return CurveKeyPair(publicKey: Self.string(publicKey), secretKey: Self.string(secretKey))
    }

    /// Derives the public key of a secret key (`zmq_curve_public`).
    ///
    /// - Parameter secretKey: 40 Z85 characters.
    /// - Returns: The public key, 40 Z85 characters.
    /// - Throws: `ZeroMQError.invalidArgument` for a key that is not 40 Z85 characters;
    ///   `.notSupported` without CURVE.
    public static func publicKey(forSecretKey secretKey: String) throws -> String {
        guard secretKey.utf8.count == 40 else { throw ZeroMQError.invalidArgument }
        var publicKey = [CChar](repeating: 0, count: 41)
        try valueOrZeroMQError { zmq_curve_public(&publicKey, secretKey) }
        return Self.string(publicKey)
    }

    /// `CurveKeyPair(public: <public key>)`.
    public var description: String {
        "CurveKeyPair(public: \(publicKey))"
    }

    /// Decodes a 40-character Z85 key into its 32 bytes (`zmq_z85_decode`), as ZAP requests carry
    /// CURVE keys. - Returns: nil unless `text` is exactly 40 valid Z85 characters.
    public static func keyBytes(z85 text: String) -> [UInt8]? {
        guard text.utf8.count == 40 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        let decoded = text.withCString { zmq_z85_decode(&bytes, $0) }
        return decoded == nil ? nil : bytes
    }

    /// Whether `text` is a usable CURVE key: 40 valid Z85 characters.
    public static func isValidKey(_ text: String) -> Bool { keyBytes(z85: text) != nil }

    private static func string(_ characters: [CChar]) -> String {
        let bytes = characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Socket {
    /// Makes this socket a CURVE server (`ZMQ_CURVE_SERVER` = 1, `ZMQ_CURVE_SECRETKEY`). Set before
    /// binding. Peers must then connect with `setCurveClient(keys:serverPublicKey:)`.
    ///
    /// - Parameter secretKey: The server's secret key, 40 Z85 characters.
    /// - Throws: `ZeroMQError.invalidArgument` for a malformed key; `.notSupported` without CURVE.
    public func setCurveServer(secretKey: String) throws {
        try setOption(ZMQ_CURVE_SERVER, Int32(1))
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(secretKey.utf8))
    }

    /// Makes this socket a CURVE client (`ZMQ_CURVE_PUBLICKEY`, `ZMQ_CURVE_SECRETKEY`,
    /// `ZMQ_CURVE_SERVERKEY`). Set before connecting.
    ///
    /// With a wrong server key the handshake fails without an error here: sends succeed and nothing
    /// arrives. Watch for it with `monitor(endpoint:events:)` and `MonitorEvent.Kind.handshakeFailed`
    /// (reported by the server) or the absence of `.handshakeSucceeded` (on the client).
    ///
    /// - Parameters:
    ///   - keys: This client's key pair, 40 Z85 characters each.
    ///   - serverPublicKey: The server's public key, 40 Z85 characters.
    /// - Throws: `ZeroMQError.invalidArgument` for a malformed key; `.notSupported` without CURVE.
    public func setCurveClient(keys: CurveKeyPair, serverPublicKey: String) throws {
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: Array(keys.publicKey.utf8))
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(keys.secretKey.utf8))
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: Array(serverPublicKey.utf8))
    }
}
