// SPDX-License-Identifier: Apache-2.0

import Foundation
package import SleepTapCore
package import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A ZeroMQ CURVE certificate: the ZPL text that czmq (`zcert_save`), pyzmq
/// (`zmq.auth.create_certificates`, `load_certificate`) and libzmq's tools share. A public
/// certificate holds `curve/public-key`; a secret certificate also holds `curve/secret-key`. Both
/// keys are 40 Z85 characters. A `metadata` section may hold anything and is ignored.
///
/// ```
/// metadata
/// curve
///     public-key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
///     secret-key = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
/// ```
package struct CurveCertificate: Equatable, Sendable {
    package var publicKey: String
    /// nil in a public certificate.
    package var secretKey: String?

    package init(publicKey: String, secretKey: String? = nil) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Reads a certificate from ZPL text.
    /// - Throws: `ZPLError` naming the line: ZPL syntax, a section or property a certificate does
    ///   not have, a key given twice or not 40 Z85 characters, no public key, or a public key that
    ///   does not belong to the secret key.
    package init(parsing text: String) throws(ZPLError) {
        let document = try ZPLDocument(parsing: text)
        var found: [String: ZPLDocument.Property] = [:]
        var curveLine: Int?
        for property in document.properties {
            let path = property.path.joined(separator: "/")
            switch property.path.count {
            case 1:
                guard ["metadata", "curve"].contains(property.path[0]) else {
                    throw ZPLError(
                        line: property.line,
                        "unknown section \"\(clipped(path))\"; a CURVE certificate has the sections metadata and curve"
                    )
                }
                guard property.value == nil else {
                    throw ZPLError(line: property.line, "the section \(path) takes no value (found \"=\")")
                }
                if property.path[0] == "curve" {
                    if let curveLine {
                        throw ZPLError(
                            line: property.line, "a second curve section (the first is on line \(curveLine))")
                    }
                    curveLine = property.line
                }
            case _ where property.path[0] == "metadata":
                continue
            case 2:
                guard ["public-key", "secret-key"].contains(property.path[1]) else {
                    throw ZPLError(
                        line: property.line,
                        "unknown property \"\(clipped(path))\"; the curve section holds public-key and secret-key")
                }
                if let earlier = found[property.path[1]] {
                    throw ZPLError(
                        line: property.line, "\(path) is given twice (lines \(earlier.line) and \(property.line))")
                }
                guard let value = property.value else {
                    throw ZPLError(
                        line: property.line, "\(path) has no value (expected \(path) = \"<40 Z85 characters>\")")
                }
                guard CurveKeyPair.isValidKey(value) else {
                    throw ZPLError(
                        line: property.line,
                        "\(path) is not a CURVE key: expected 40 Z85 characters, found \(value.count) characters"
                            + (value.count == 40 ? " outside the Z85 alphabet" : ""))
                }
                found[property.path[1]] = property
            default:
                throw ZPLError(
                    line: property.line, "unexpected property \"\(clipped(path))\" below \(property.path[1])")
            }
        }
        guard let curveLine else {
            throw ZPLError(line: 1, "no curve section: this is not a ZeroMQ CURVE certificate")
        }
        guard let publicKey = found["public-key"], let publicValue = publicKey.value else {
            throw ZPLError(line: curveLine, "the curve section has no public-key")
        }
        let secretValue = found["secret-key"]?.value
        if let secretValue, (try? CurveKeyPair.publicKey(forSecretKey: secretValue)) != publicValue {
            throw ZPLError(line: publicKey.line, "curve/public-key does not belong to curve/secret-key")
        }
        self.init(publicKey: publicValue, secretKey: secretValue)
    }

    /// The certificate as ZPL text, after `comment` lines (each prefixed `#   `); the secret key
    /// is written only when there is one.
    package func zpl(comment: [String]) -> String {
        var text = comment.map { "#   \($0)\n" }.joined() + "\nmetadata\ncurve\n"
        text += "    public-key = \"\(publicKey)\"\n"
        if let secretKey { text += "    secret-key = \"\(secretKey)\"\n" }
        return text
    }
}

/// This side's CURVE key pair and the paired peer's public key.
package struct PairKeys: Sendable, Equatable {
    package let mine: CurveKeyPair
    package let peerPublicKey: String
}

/// Pairing a phone and a watch with CURVE certificates (ZeroMQ's certificate files, see
/// `CurveCertificate`; keys from `zmq_curve_keypair`, Curve25519).
///
/// Each side makes its own key pair (`phone keygen --dir DIR`, `watch keygen --dir DIR`): the
/// secret certificate `NAME.key_secret` (mode 0600, never leaves the device) and the public
/// certificate `NAME.key`. Pairing exchanges only public certificates: the keys directory of the
/// phone holds `phone.key_secret` and the watch's `watch.key`; the watch's holds
/// `watch.key_secret` and the phone's `phone.key`. Phone and watch on one machine may share one
/// directory holding all four files.
package enum Pairing {
    /// The two sides; the raw value is the certificate's file name.
    package enum Role: String, Sendable, CaseIterable {
        case phone, watch

        package var peer: Role { self == .phone ? .watch : .phone }
    }

    /// `DIR/NAME.key_secret`.
    package static func secretCertificatePath(_ directory: String, _ role: Role) -> String {
        "\(directory)/\(role.rawValue).key_secret"
    }

    /// `DIR/NAME.key`.
    package static func publicCertificatePath(_ directory: String, _ role: Role) -> String {
        "\(directory)/\(role.rawValue).key"
    }

    /// Makes `role`'s key pair: writes `DIR/NAME.key_secret` (mode 0600) and `DIR/NAME.key` (mode
    /// 0644), creating DIR (mode 0700) when it is missing.
    /// - Returns: the key pair.
    /// - Throws: `FileError` when a certificate of that name exists (certificates are never
    ///   overwritten), DIR is writable by another user (`requireNotWritableByOthers`), or a file
    ///   cannot be written; nothing is left half-made.
    package static func generate(into directory: String, role: Role) throws(FileError) -> CurveKeyPair {
        try AtomicFile.ensureDirectory(directory)
        try requireNotWritableByOthers(directory, what: "the keys directory")
        let secretPath = secretCertificatePath(directory, role)
        let publicPath = publicCertificatePath(directory, role)
        for path in [secretPath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw FileError(
                path: path,
                reason: "exists; certificates are never overwritten (to make a new key pair, remove \(secretPath) "
                    + "and \(publicPath) first; then copy the new \(role.rawValue).key into the "
                    + "\(role.peer.rawValue)'s --keys directory, in place of the old one)")
        }
        let keys: CurveKeyPair
        do {
            keys = try CurveKeyPair.generate()
        } catch {
            throw FileError(path: directory, reason: "cannot generate CURVE keys: \(error)")
        }
        let header = "ZeroMQ CURVE certificate (ZPL, https://rfc.zeromq.org/spec/4/) of the SleepTap \(role.rawValue)"
        let secret = CurveCertificate(publicKey: keys.publicKey, secretKey: keys.secretKey).zpl(comment: [
            "SECRET " + header,
            "Keep it on this device, readable by you only (mode 0600). Give the peer \(role.rawValue).key instead.",
        ])
        let shared = CurveCertificate(publicKey: keys.publicKey).zpl(comment: [
            "Public " + header,
            "Copy it into the keys directory of the \(role.peer.rawValue) it is paired with.",
        ])
        try createExclusive(Data(secret.utf8), at: secretPath, mode: 0o600)
        do {
            try createExclusive(Data(shared.utf8), at: publicPath, mode: 0o644)
        } catch {
            unlink(secretPath)
            throw error
        }
        return keys
    }

    /// Loads one side's keys from its keys directory: `NAME.key_secret` and the peer's `PEER.key`.
    /// - Throws: `FileError` naming the file and, for a bad certificate, the line: missing,
    ///   readable by others, the directory or a certificate writable by another user (who could
    ///   put their own key in place of the peer's), not a certificate, the wrong kind of certificate, or this side's own key
    ///   where the peer's belongs.
    package static func load(directory: String, role: Role) throws(FileError) -> PairKeys {
        let secretPath = secretCertificatePath(directory, role)
        try requireNotWritableByOthers(directory, what: "the keys directory")
        for path in [secretPath, publicCertificatePath(directory, role), publicCertificatePath(directory, role.peer)] {
            try requireNotWritableByOthers(path, what: "the certificate")
        }
        var info = stat()
        guard stat(secretPath, &info) == 0 else {
            throw FileError(
                path: secretPath,
                reason:
                    "missing (make this \(role.rawValue)'s key pair with `\(role.rawValue) keygen --dir \(directory)`)")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw FileError(
                path: secretPath,
                reason: "is mode \(String(info.st_mode & 0o777, radix: 8)): a secret certificate must be "
                    + "readable by you only (chmod 600 \(secretPath))")
        }
        let mine = try certificate(at: secretPath)
        guard let secretKey = mine.secretKey else {
            throw FileError(
                path: secretPath, reason: "holds no curve/secret-key: this is a public certificate, not a secret one")
        }
        let ownPublicPath = publicCertificatePath(directory, role)
        if FileManager.default.fileExists(atPath: ownPublicPath),
            try certificate(at: ownPublicPath).publicKey != mine.publicKey
        {
            throw FileError(
                path: ownPublicPath,
                reason: "its public key is not the one in \(secretPath); this \(role.rawValue)'s public "
                    + "certificate must belong to its secret one")
        }
        let peerPath = publicCertificatePath(directory, role.peer)
        guard FileManager.default.fileExists(atPath: peerPath) else {
            throw FileError(
                path: peerPath,
                reason:
                    "missing: copy the \(role.peer.rawValue)'s public certificate here (it is \(role.peer.rawValue).key "
                    + "in the directory of `\(role.peer.rawValue) keygen --dir DIR`)")
        }
        let peer = try certificate(at: peerPath)
        guard peer.secretKey == nil else {
            throw FileError(
                path: peerPath,
                reason: "holds a secret key: the \(role.rawValue) needs only the \(role.peer.rawValue)'s public "
                    + "certificate; a secret key must never leave its device (make a new key pair there)")
        }
        guard peer.publicKey != mine.publicKey else {
            throw FileError(
                path: peerPath,
                reason: "is this \(role.rawValue)'s own public key; it must be the \(role.peer.rawValue)'s")
        }
        return PairKeys(
            mine: CurveKeyPair(publicKey: mine.publicKey, secretKey: secretKey), peerPublicKey: peer.publicKey)
    }

    /// Refuses a keys directory or certificate that another user could change: one owned by
    /// another user (root excepted), or writable by group or others (mode bits 0022). Whoever
    /// may write there can swap in their own public key and be admitted as the peer, as
    /// OpenSSH refuses such files for `authorized_keys` (sshd(8), `StrictModes`).
    /// - Parameters:
    ///   - path: the directory or file; a missing one passes (other checks name it).
    ///   - what: its role in the message (`the keys directory`).
    /// - Throws: `FileError` naming the path, its owner and mode, and the fix.
    static func requireNotWritableByOthers(_ path: String, what: String) throws(FileError) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw FileError(
                path: path,
                reason: "\(what) is \(EndpointDiagnosis.ownerAndMode(info)), not this user's "
                    + "(\(EndpointDiagnosis.userName(geteuid()))): its owner could replace the keys")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw FileError(
                path: path,
                reason: "\(what) is mode \(String(info.st_mode & 0o777, radix: 8)): other users may write to it and "
                    + "could put their own key in place of the peer's (run `chmod go-w \(path)`)")
        }
    }

    /// Reads and parses one certificate file.
    static func certificate(at path: String) throws(FileError) -> CurveCertificate {
        let data: Data
        do throws(BoundedFile.Failure) {
            data = try BoundedFile.read(path, limit: 65_536)
        } catch .tooLarge(let size, let limit) {
            let words = BoundedFile.Failure.tooLarge(size: size, limit: limit)
            throw FileError(path: path, reason: "\(words); a certificate is a few hundred")
        } catch {
            throw FileError(path: path, reason: error.description, errno: error.errno)
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw FileError(path: path, reason: "not text (invalid UTF-8); a certificate is ZPL text")
        }
        do {
            return try CurveCertificate(parsing: text)
        } catch {
            throw FileError(path: path, reason: error.description)
        }
    }

    /// Writes a new file with `mode`, never replacing one: the bytes go to a temp file that is
    /// then hard-linked to `path` (link(2) fails with EEXIST instead of replacing).
    private static func createExclusive(_ data: Data, at path: String, mode: mode_t) throws(FileError) {
        let temp = "\(path).tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw FileError(path: temp, "open failed", errno: .current)
        }
        defer { unlink(temp) }
        let written = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let count = write(fd, base + offset, buffer.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let synced = written && fchmod(fd, mode) == 0 && fsync(fd) == 0
        let failure = Errno.current
        close(fd)
        guard synced else {
            throw FileError(path: temp, "write failed", errno: failure)
        }
        guard link(temp, path) == 0 else {
            throw FileError(path: path, "cannot create", errno: .current)
        }
    }
}

/// `phone keygen` and `watch keygen`: make this side's CURVE certificates.
package enum KeyGeneration {
    /// Runs `ROLE keygen ARGUMENTS` (arguments after `keygen`), printing to stdout and stderr.
    /// - Returns: the exit status: 0, 64 for bad arguments, 73 when the files cannot be made, 74
    ///   when stdout cannot be written.
    package static func main(role: Role, arguments: [String]) -> ExitCode {
        let program = role.rawValue
        let directory: String
        do {
            switch try CommandLineParser.parseKeygen(arguments) {
            case .help:
                return StandardStreams.print(CommandLineParser.keygenCommand(role).help, program: program)
            case .version:
                return StandardStreams.print(SleepTapVersion.line(program), program: program)
            case .run(let value): directory = value
            }
        } catch {
            diagnose(program, "keygen: \(error)\n(see \(invokedName(program)) keygen --help)")
            return .usage
        }
        do {
            let keys = try Pairing.generate(into: directory, role: role)
            let peer = role.peer.rawValue
            return StandardStreams.print(
                """
                wrote \(Pairing.secretCertificatePath(directory, role)) (secret, mode 0600: keep it on this device)
                wrote \(Pairing.publicCertificatePath(directory, role)) (public key \(keys.publicKey))
                next: copy \(Pairing.publicCertificatePath(directory, role)) into the \(peer)'s keys directory, \
                and the \(peer)'s \(peer).key (from `\(peer) keygen`) into \(directory); then start with --keys \(directory)
                """, program: program)
        } catch {
            diagnose(program, "keygen: \(error)")
            return .cantCreate
        }
    }

    package typealias Role = Pairing.Role
}
