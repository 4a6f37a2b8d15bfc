public import Foundation
public import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// This side's CURVE key pair and the paired peer's public key.
public struct PairKeys: Sendable, Equatable {
    public let mine: CurveKeyPair
    public let peerPublicKey: String
}

/// Pairing a phone and a watch: CURVE key pairs (libzmq's `zmq_curve_keypair`, Curve25519) in
/// files only the user can read.
///
/// A pairing directory holds `phone.key` and `watch.key` (`public=<Z85>` and `secret=<Z85>`
/// lines) and `phone.pub` and `watch.pub` (the public key alone), every file mode 0600 and the
/// directory 0700. The phone loads `phone.key` + `watch.pub`; the watch `watch.key` + `phone.pub`.
public enum Pairing {
    /// Creates a pairing directory.
    /// - Throws: `FileError` when the directory cannot be made private, or a key file already
    ///   exists (keys are never overwritten: remove the old ones first).
    public static func generate(into directory: String) throws(FileError) -> (phone: CurveKeyPair, watch: CurveKeyPair)
    {
        try AtomicFile.ensureDirectory(directory)
        guard chmod(directory, 0o700) == 0 else {
            throw FileError(
                path: directory, reason: "cannot make it private (chmod 700): \(String(cString: strerror(errno)))")
        }
        for name in ["phone.key", "watch.key", "phone.pub", "watch.pub"]
        where FileManager.default.fileExists(atPath: "\(directory)/\(name)") {
            throw FileError(
                path: "\(directory)/\(name)", reason: "exists; keys are never overwritten, remove the old pairing first"
            )
        }
        let phone: CurveKeyPair
        let watch: CurveKeyPair
        do {
            phone = try CurveKeyPair.generate()
            watch = try CurveKeyPair.generate()
        } catch {
            throw FileError(path: directory, reason: "cannot generate CURVE keys: \(error)")
        }
        try AtomicFile.write(
            Data("public=\(phone.publicKey)\nsecret=\(phone.secretKey)\n".utf8), to: "\(directory)/phone.key")
        try AtomicFile.write(
            Data("public=\(watch.publicKey)\nsecret=\(watch.secretKey)\n".utf8), to: "\(directory)/watch.key")
        try AtomicFile.write(Data("\(phone.publicKey)\n".utf8), to: "\(directory)/phone.pub")
        try AtomicFile.write(Data("\(watch.publicKey)\n".utf8), to: "\(directory)/watch.pub")
        return (phone, watch)
    }

    /// Loads one side's keys from a pairing directory.
    /// - Parameter role: `phone` or `watch`.
    /// - Throws: `FileError` naming the file: missing, readable by others, malformed, or a public
    ///   key that does not belong to the secret key.
    public static func load(directory: String, role: String) throws(FileError) -> PairKeys {
        let peer = role == "phone" ? "watch" : "phone"
        let keyPath = "\(directory)/\(role).key"
        var info = stat()
        guard stat(keyPath, &info) == 0 else {
            throw FileError(path: keyPath, reason: "missing (create a pairing with `phone pair --dir \(directory)`)")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw FileError(
                path: keyPath,
                reason:
                    "is mode \(String(info.st_mode & 0o777, radix: 8)): a secret key must be readable by you only (chmod 600)"
            )
        }
        let fields = try lines(keyPath)
        guard let publicKey = fields.first(where: { $0.hasPrefix("public=") })?.dropFirst(7),
            let secretKey = fields.first(where: { $0.hasPrefix("secret=") })?.dropFirst(7),
            CurveKeyPair.isValidKey(String(publicKey)), CurveKeyPair.isValidKey(String(secretKey))
        else {
            throw FileError(path: keyPath, reason: "expected two lines public=<40 Z85 chars> and secret=<40 Z85 chars>")
        }
        guard (try? CurveKeyPair.publicKey(forSecretKey: String(secretKey))) == String(publicKey) else {
            throw FileError(path: keyPath, reason: "the public key does not belong to the secret key")
        }
        let peerPath = "\(directory)/\(peer).pub"
        guard let peerKey = try lines(peerPath).first, CurveKeyPair.isValidKey(peerKey) else {
            throw FileError(path: peerPath, reason: "expected one line with a 40-character Z85 public key")
        }
        return PairKeys(
            mine: CurveKeyPair(publicKey: String(publicKey), secretKey: String(secretKey)), peerPublicKey: peerKey)
    }

    private static func lines(_ path: String) throws(FileError) -> [String] {
        guard let data = FileManager.default.contents(atPath: path), data.count < 4_096 else {
            throw FileError(path: path, reason: "cannot be read (missing, unreadable or too large)")
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }
}
