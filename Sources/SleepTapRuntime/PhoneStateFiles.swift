// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

/// The phone's state on disk, in two files of its state dir: `phone.json`, what sync needs
/// (`PhoneSyncState.SyncPart`: epoch, last seq, outbox, acked, device seed), and
/// `phone-app.json`, the rest (`PhoneAppState`: notices, run history, forecast cache).
///
/// A save writes the app part first and only when it differs from what this process last wrote
/// or read, then the sync part; so the ACK path, which changes the sync part alone, writes one
/// small file (docs/architecture.md, "The phone's state files"). Both writes are atomic and
/// durable (`StateFile`), and both are on disk before the node's next send or event.
struct PhoneStateFiles {
    /// The name of the app part's file in the state dir.
    static let appFileName = "phone-app.json"

    let sync: StateFile<PhoneSyncState.SyncPart>
    let app: StateFile<PhoneAppState>
    /// The app part as last written or read; nil: write it at the next save.
    private var savedApp: PhoneAppState?

    /// The files beside `syncPath` (phone.json); `savedApp` is what phone-app.json holds now.
    init(syncPath: String, savedApp: PhoneAppState?) {
        sync = StateFile(path: syncPath)
        let directory = FilePaths.directory(of: syncPath)
        app = StateFile(path: directory + "/" + Self.appFileName)
        self.savedApp = savedApp
    }

    /// Reads phone-app.json (with recovery, as phone.json is read) into `loaded`, the state read
    /// from phone.json. Without phone-app.json the app part is what phone.json holds: nothing in
    /// a fresh state dir, the whole state in one written before the split, which the first save
    /// then moves.
    /// - Returns: the state and the files to save it in.
    /// - Throws: `FileError` when phone-app.json is there and can be neither read nor recovered.
    static func load(
        loaded: PhoneSyncState?, syncPath: String, program: String, output: EventOutput
    ) throws(FileError) -> (state: PhoneSyncState?, files: PhoneStateFiles) {
        var files = PhoneStateFiles(syncPath: syncPath, savedApp: nil)
        // A file that was there and refused is said by the recovery itself, not as missing.
        let appWasThere = [files.app.path, files.app.path + ".prev"].contains {
            FileManager.default.fileExists(atPath: $0)
        }
        guard
            let app = try files.app.loadReportingRecovery(
                program: program, output: output, validate: { $0.validationProblem })
        else {
            // phone.json without its app part: said, unless it holds the whole state (written
            // before the split), which the first save moves.
            if loaded != nil, !appWasThere, !Self.holdsAppPart(syncPath) {
                Self.reportMissing(
                    files.app.path, beside: syncPath, starting: "the notices, run history and forecast start empty",
                    program: program, output: output)
            }
            return (loaded, files)
        }
        if loaded == nil {
            Self.reportMissing(
                syncPath, beside: files.app.path,
                starting: "a new epoch and device seed, the batch numbering from 1", program: program,
                output: output)
        }
        files.savedApp = app
        var state = loaded ?? PhoneSyncState()
        state.app = app
        return (state, files)
    }

    /// Whether phone.json (or its previous copy) holds the app part: a file written before the split.
    static func holdsAppPart(_ syncPath: String) -> Bool {
        for path in [syncPath, syncPath + ".prev"] {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            return object?["refreshLog"] != nil
        }
        return false
    }

    /// Says on stderr and as `state.recovered` that one of the two files (and its previous copy)
    /// is missing while the other is there: its part starts as on a first start.
    static func reportMissing(
        _ path: String, beside other: String, starting: String, program: String, output: EventOutput
    ) {
        let reason = "missing, with no previous copy, while \(other) is there"
        diagnose(program, "state file \(path): \(reason); starting its part clean: \(starting)")
        output.emit(
            Event(
                .stateRecovered,
                [
                    ("path", .string(path)), ("reason", .string(reason)), ("movedTo", .null),
                    ("from", .string(StateFile<PhoneAppState>.Source.cleanStart.rawValue)),
                    ("previousReason", .null), ("previousMovedTo", .null),
                ]))
    }

    /// Writes `state`: its app part when it changed, then its sync part.
    /// - Returns: `.failed` with the errno and, for phone-app.json, its path, when a write failed;
    ///   a failed app write leaves the sync part unwritten and is tried again at the next save.
    mutating func save(_ state: PhoneSyncState) -> PersistResult {
        do throws(FileError) {
            let part = state.app
            if part != savedApp {
                do throws(FileError) {
                    try app.save(part)
                } catch {
                    return .failed(errno: error.errno?.code, reason: error.reason, path: app.path)
                }
                savedApp = part
            }
            try sync.save(state.syncPart)
            return .succeeded
        } catch {
            return .failed(errno: error.errno?.code, reason: error.reason)
        }
    }
}
