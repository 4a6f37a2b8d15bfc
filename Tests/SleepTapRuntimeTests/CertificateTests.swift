// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import Testing
import ZeroMQ

@testable import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

@Suite("ZPL and CURVE certificates")
struct CertificateTests {
    /// A key pair fixed for these tests (the secret's public key, `zmq_curve_public`).
    static let secretKey = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
    static var publicKey: String { (try? CurveKeyPair.publicKey(forSecretKey: secretKey)) ?? "" }

    static func tempDir() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sleeptap-keys-\(UUID().uuidString)")
            .path
        try AtomicFile.ensureDirectory(dir)
        return dir
    }

    @Test("ZPL: comments, blank lines, quotes, bare values, children and CR LF line ends")
    func zplParses() throws {
        let text =
            "# a comment\r\n\r\ncontext\r\n    iothreads = 1\r\n    verbose = 1      #   Ask for a trace\n"
            + "main\n    frontend\n        option\n            subscribe = \"#2\"\n    backend = 'tcp://e:1' # c\n"
            + "    bind = tcp://eth0:5556\rlast"
        let document = try ZPLDocument(parsing: text)
        let found = document.properties.map { ($0.path.joined(separator: "/"), $0.value, $0.line) }
        let expected: [(String, String?, Int)] = [
            ("context", nil, 3), ("context/iothreads", "1", 4), ("context/verbose", "1", 5), ("main", nil, 6),
            ("main/frontend", nil, 7), ("main/frontend/option", nil, 8), ("main/frontend/option/subscribe", "#2", 9),
            ("main/backend", "tcp://e:1", 10), ("main/bind", "tcp://eth0:5556", 11), ("last", nil, 12),
        ]
        #expect(found.count == expected.count)
        for (got, want) in zip(found, expected) {
            #expect(got.0 == want.0 && got.1 == want.1 && got.2 == want.2, "\(got) != \(want)")
        }
    }

    @Test(
        "ZPL that breaks the rules is refused with its line and the cause",
        arguments: [
            ("curve\n\tpublic-key = \"x\"\n", 2, "a tab in the indentation"),
            ("curve\n  public-key = \"x\"\n", 2, "indented 2 spaces; ZPL indents in steps of 4"),
            ("curve\n        public-key = \"x\"\n", 2, "more than 4 deeper"),
            ("    curve\n", 1, "more than 4 deeper"),
            ("# c\ncurve\n    public key = \"x\"\n", 3, "expected = or the end of the line after public, found \"k\""),
            ("curve\n    =x\n", 2, "expected a property name"),
            ("cur%ve\n", 1, "expected = or the end of the line after cur, found \"%\""),
            ("curve\n    public-key = \"abc\n", 2, "opens a quote (\") that is never closed"),
            ("curve\n    public-key = 'abc' x\n", 2, "text after the closing quote: \"x\""),
            ("curve\n    public-key = a\u{1}b\n", 2, "control character U+1"),
        ])
    func zplErrors(_ text: String, _ line: Int, _ reason: String) {
        #expect {
            try ZPLDocument(parsing: text)
        } throws: { error in
            guard let error = error as? ZPLError else { return false }
            return error.line == line && error.reason.contains(reason)
        }
    }

    @Test("A certificate as pyzmq and czmq write it is read; metadata is ignored")
    func certificateParses() throws {
        let secret = """
            #   ****  Generated on 2026-01-01 00:00:00 by pyzmq  ****
            #   ZeroMQ CURVE **Secret** Certificate

            metadata
                name = phone one
                nested
                    deeper = 'x'
            curve
                public-key = "\(Self.publicKey)"
                secret-key = "\(Self.secretKey)"

            """
        let certificate = try CurveCertificate(parsing: secret)
        #expect(certificate == CurveCertificate(publicKey: Self.publicKey, secretKey: Self.secretKey))
        let single = try CurveCertificate(parsing: "curve\n    public-key = '\(Self.publicKey)'   # a comment\n")
        #expect(single == CurveCertificate(publicKey: Self.publicKey))
    }

    @Test("What is written reads back: secret and public certificates")
    func roundTrip() throws {
        let keys = try CurveKeyPair.generate()
        let secret = CurveCertificate(publicKey: keys.publicKey, secretKey: keys.secretKey)
        #expect(try CurveCertificate(parsing: secret.zpl(comment: ["one", "two"])) == secret)
        let shared = CurveCertificate(publicKey: keys.publicKey)
        let text = shared.zpl(comment: [])
        #expect(try CurveCertificate(parsing: text) == shared)
        #expect(!text.contains(keys.secretKey))
    }

    @Test(
        "A ZPL text that is not a usable certificate names the line and what is wrong",
        arguments: [
            ("metadata\n", 1, "no curve section"),
            ("curve\n", 1, "the curve section has no public-key"),
            ("curve\n    secret-key = \"\(secretKey)\"\n", 1, "the curve section has no public-key"),
            ("curves\n", 1, "unknown section \"curves\""),
            ("curve = 1\n", 1, "the section curve takes no value"),
            ("curve\ncurve\n", 2, "a second curve section (the first is on line 1)"),
            ("curve\n    publickey = \"x\"\n", 2, "unknown property \"curve/publickey\""),
            ("curve\n    public-key\n", 2, "curve/public-key has no value"),
            ("curve\n    public-key = \"abc\"\n", 2, "expected 40 Z85 characters, found 3 characters"),
            (
                "curve\n    public-key = \"\(String(repeating: "~", count: 40))\"\n", 2,
                "found 40 characters outside the Z85 alphabet"
            ),
            (
                "curve\n    public-key = \"\(publicKey)\"\n    public-key = \"\(publicKey)\"\n", 3,
                "curve/public-key is given twice (lines 2 and 3)"
            ),
            (
                "curve\n    public-key = \"\(publicKey)\"\n        extra = 1\n", 3,
                "unexpected property \"curve/public-key/extra\""
            ),
            (
                "curve\n    public-key = \"\(secretKey)\"\n    secret-key = \"\(secretKey)\"\n", 2,
                "curve/public-key does not belong to curve/secret-key"
            ),
        ])
    func certificateErrors(_ text: String, _ line: Int, _ reason: String) {
        #expect {
            try CurveCertificate(parsing: text)
        } throws: { error in
            guard let error = error as? ZPLError else { return false }
            return error.line == line && error.reason.contains(reason)
        }
    }

    @Test("keygen writes a 0600 secret and a public certificate per side; pairing loads them; never overwritten")
    func generateAndLoad() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let phone = try Pairing.generate(into: dir, role: .phone)
        let watch = try Pairing.generate(into: dir, role: .watch)
        var info = stat()
        #expect(stat("\(dir)/phone.key_secret", &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat("\(dir)/phone.key", &info) == 0 && info.st_mode & 0o777 == 0o644)
        let publicText = try String(contentsOfFile: "\(dir)/phone.key", encoding: .utf8)
        #expect(!publicText.contains(phone.secretKey))
        #expect(try Pairing.load(directory: dir, role: .phone) == PairKeys(mine: phone, peerPublicKey: watch.publicKey))
        #expect(try Pairing.load(directory: dir, role: .watch) == PairKeys(mine: watch, peerPublicKey: phone.publicKey))

        let before = FileManager.default.contents(atPath: "\(dir)/phone.key_secret")
        #expect {
            try Pairing.generate(into: dir, role: .phone)
        } throws: { error in
            let reason = (error as? FileError)?.reason ?? ""
            // Says what to do, not "pair again": which public certificate goes where.
            return reason.contains("never overwritten") && !reason.contains("pair again")
                && reason.contains("copy the new")
        }
        #expect(FileManager.default.contents(atPath: "\(dir)/phone.key_secret") == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == [
                "phone.key", "phone.key_secret", "watch.key", "watch.key_secret",
            ])
    }

    /// A keys directory for the phone: its own certificates, and `peer` as `watch.key`.
    static func phoneDirectory(peer: String?) throws -> String {
        let dir = try tempDir()
        _ = try Pairing.generate(into: dir, role: .phone)
        if let peer { #expect(FileManager.default.createFile(atPath: "\(dir)/watch.key", contents: Data(peer.utf8))) }
        return dir
    }

    @Test("Keys that cannot be used are refused naming the file, and the line when it is the text")
    func loadErrors() throws {
        let watch = try CurveKeyPair.generate()
        let watchPublic = CurveCertificate(publicKey: watch.publicKey).zpl(comment: [])
        func failure(_ dir: String) -> FileError? {
            do {
                _ = try Pairing.load(directory: dir, role: .phone)
                return nil
            } catch {
                return error
            }
        }

        let empty = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let missing = try #require(failure(empty))
        #expect(missing.path == "\(empty)/phone.key_secret" && missing.reason.contains("phone keygen --dir"))

        let noPeer = try Self.phoneDirectory(peer: nil)
        defer { try? FileManager.default.removeItem(atPath: noPeer) }
        let peerMissing = try #require(failure(noPeer))
        #expect(peerMissing.path == "\(noPeer)/watch.key" && peerMissing.reason.contains("copy the watch's public"))

        let loose = try Self.phoneDirectory(peer: watchPublic)
        defer { try? FileManager.default.removeItem(atPath: loose) }
        #expect(chmod("\(loose)/phone.key_secret", 0o640) == 0)
        let looseError = try #require(failure(loose))
        #expect(looseError.reason.contains("is mode 640") && looseError.reason.contains("chmod 600"))

        let leaked = try Self.phoneDirectory(
            peer: CurveCertificate(publicKey: watch.publicKey, secretKey: watch.secretKey).zpl(comment: []))
        defer { try? FileManager.default.removeItem(atPath: leaked) }
        #expect(try #require(failure(leaked)).reason.contains("holds a secret key"))

        let own = try Self.phoneDirectory(peer: nil)
        defer { try? FileManager.default.removeItem(atPath: own) }
        try FileManager.default.copyItem(atPath: "\(own)/phone.key", toPath: "\(own)/watch.key")
        #expect(try #require(failure(own)).reason.contains("this phone's own public key"))

        let mismatched = try Self.phoneDirectory(peer: watchPublic)
        defer { try? FileManager.default.removeItem(atPath: mismatched) }
        #expect(unlink("\(mismatched)/phone.key") == 0)
        #expect(FileManager.default.createFile(atPath: "\(mismatched)/phone.key", contents: Data(watchPublic.utf8)))
        let mismatch = try #require(failure(mismatched))
        #expect(mismatch.path == "\(mismatched)/phone.key" && mismatch.reason.contains("not the one in"))

        let broken = try Self.phoneDirectory(peer: watchPublic.replacing("    public-key", with: "\tpublic-key"))
        defer { try? FileManager.default.removeItem(atPath: broken) }
        let brokenError = try #require(failure(broken))
        #expect(brokenError.path == "\(broken)/watch.key")
        #expect(brokenError.reason.hasPrefix("line 4: a tab in the indentation"), "\(brokenError)")

        let publicOnly = try Self.phoneDirectory(peer: watchPublic)
        defer { try? FileManager.default.removeItem(atPath: publicOnly) }
        #expect(unlink("\(publicOnly)/phone.key_secret") == 0)
        #expect(
            FileManager.default.createFile(atPath: "\(publicOnly)/phone.key_secret", contents: Data(watchPublic.utf8)))
        #expect(chmod("\(publicOnly)/phone.key_secret", 0o600) == 0)
        #expect(try #require(failure(publicOnly)).reason.contains("holds no curve/secret-key"))
    }

    @Test("keygen's command line: --dir, --help, and usage errors")
    func keygenArguments() throws {
        guard case .run(let dir) = try CommandLineParser.parseKeygen(["--dir", "k"]) else {
            Issue.record("expected a directory")
            return
        }
        #expect(dir == "k")
        guard case .help = try CommandLineParser.parseKeygen(["--help"]) else {
            Issue.record("expected help")
            return
        }
        #expect(throws: UsageError("--dir is required")) { try CommandLineParser.parseKeygen([]) }
        #expect(throws: UsageError("unknown option --force")) { try CommandLineParser.parseKeygen(["--force"]) }
        #expect(CommandLineParser.keygenCommand(.watch).help.contains("DIR/watch.key_secret"))
    }
}
