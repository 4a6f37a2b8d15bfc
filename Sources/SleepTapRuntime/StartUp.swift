// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// What both executables do before they touch a socket, in this order: install the signal
/// trap (so SIGINT/SIGTERM during start-up still end the process cleanly), follow the spawning
/// tool's life when one set `SLEEPTAP_PARENT_PID` (`ParentProcess`), run the caller's
/// preflight checks (e.g. the schedule file, before anything is created), create and lock the
/// state directory (one process per state dir; a phone and a watch never share one), remove temp files that killed saves left behind,
/// load the state file with recovery (a bad file is moved aside, reported on stderr and as
/// `state.recovered`), load the pairing keys if any.
final class StartUp<State: Codable & Sendable> {
    let mailbox: Mailbox
    let signals: SignalTrap
    let stateFile: StateFile<State>
    let loaded: State?
    let keys: PairKeys?
    private let lock: Int32

    private init(
        mailbox: Mailbox, signals: SignalTrap, stateFile: StateFile<State>, loaded: State?, keys: PairKeys?, lock: Int32
    ) {
        self.mailbox = mailbox
        self.signals = signals
        self.stateFile = stateFile
        self.loaded = loaded
        self.keys = keys
        self.lock = lock
    }

    /// Releases the lock and the signal trap. Call once, on every path (`defer`).
    func close() {
        signals.cancel()
        Glibc.close(lock)
    }

    /// - Parameters:
    ///   - role: phone or watch (the program name in messages and the lock, the key role).
    ///   - stateDirectory: `--state-dir`.
    ///   - fileName: the state file in it.
    ///   - keysDirectory: `--keys`, if given.
    ///   - output: where `state.recovered` goes.
    ///   - validate: the state's meaning check (nil = valid).
    ///   - preflight: checks that must pass before anything is created; returns an exit status to stop.
    /// - Returns: the start-up, or the exit status to end the process with (the message is printed).
    static func begin(
        role: Pairing.Role, stateDirectory: String, fileName: String, keysDirectory: String?, output: EventOutput,
        validate: (State) -> String?, preflight: () -> ExitCode? = { nil }
    ) -> Result<StartUp, ExitCode> {
        let program = role.rawValue
        let mailbox: Mailbox
        do {
            mailbox = try Mailbox()
        } catch {
            diagnose(program, "\(error)")
            return .failure(.software)
        }
        let signals = SignalTrap(posting: mailbox)
        // Nobody reads the events any more (EPIPE): stop as on SIGTERM.
        output.whenClosed { mailbox.post(.stop(.outputClosed)) }
        // Started by a SleepTap tool: end with it (after the trap, so its SIGTERM stops cleanly).
        if let gone = ParentProcess.bind(warn: { diagnose(program, $0) }) {
            diagnose(program, gone)
            signals.cancel()
            return .failure(.ok)
        }
        func fail(_ status: ExitCode, _ message: String) -> Result<StartUp, ExitCode> {
            diagnose(program, message)
            signals.cancel()
            return .failure(status)
        }
        if let status = preflight() {
            signals.cancel()
            return .failure(status)
        }
        do {
            try AtomicFile.ensureDirectory(stateDirectory)
        } catch {
            return fail(.cantCreate, "state dir \(error)")
        }
        let lock: Int32
        switch SingleInstance.lockStateDirectory(stateDirectory, program: program) {
        case .success(let fd): lock = fd
        case .failure(let error): return fail(.cantCreate, "state dir \(error)")
        }
        func failLocked(_ status: ExitCode, _ message: String) -> Result<StartUp, ExitCode> {
            Glibc.close(lock)
            return fail(status, message)
        }
        if let problem = SingleInstance.otherProgramsState(in: stateDirectory, program: program) {
            return failLocked(.cantCreate, "state dir \(stateDirectory): \(problem)")
        }
        SingleInstance.claim(lock, program: program)
        // Others who can write the state dir can replace its files (the schedule's alarms, the
        // OS's state) between two runs; said, not refused, as a shared dir may be meant.
        var directoryStatus = stat()
        if stat(stateDirectory, &directoryStatus) == 0, directoryStatus.st_mode & S_IWOTH != 0 {
            diagnose(
                program,
                "warning: state dir \(stateDirectory) is mode "
                    + "\(String(directoryStatus.st_mode & 0o7777, radix: 8)), writable by every user: another user can "
                    + "replace its state files; chmod o-w it")
        }
        let stateFile = StateFile<State>(path: stateDirectory + "/" + fileName)
        let loaded: State?
        do {
            loaded = try stateFile.loadReportingRecovery(program: program, output: output, validate: validate)
        } catch {
            return failLocked(.dataError, "state file \(error); left untouched.")
        }
        var keys: PairKeys?
        if let keysDirectory {
            do {
                keys = try Pairing.load(directory: keysDirectory, role: role)
            } catch {
                return failLocked(.dataError, "keys: \(error)")
            }
        }
        return .success(
            StartUp(mailbox: mailbox, signals: signals, stateFile: stateFile, loaded: loaded, keys: keys, lock: lock))
    }
}

extension StateFile {
    /// Loads the state file of a locked state dir: removes the temp files of saves a killed
    /// process left behind (never a live one's), loads with recovery (`loadRecovering`), and
    /// reports a recovery on stderr and as a `state.recovered` event.
    /// - Parameters:
    ///   - program: `phone` or `watch`, the prefix of the stderr line.
    ///   - output: where `state.recovered` goes.
    ///   - validate: the state's meaning check (nil = valid).
    /// - Returns: the value, nil for a clean start.
    /// - Throws: `FileError` when a file cannot even be read or moved; nothing is touched then.
    func loadReportingRecovery(
        program: String, output: EventOutput, validate: (Value) -> String?
    ) throws(FileError) -> Value? {
        removeStaleTemporaryFiles()
        let (loaded, recovery) = try loadRecovering(validate: validate)
        guard let recovery else { return loaded }
        var message = "state file \(path): \(recovery.reason)"
        if let movedTo = recovery.movedTo { message += "; moved aside to \(movedTo)" }
        if let previousReason = recovery.previousReason {
            message += "; its previous copy \(path).prev is not usable either: \(previousReason)"
            if let previousMovedTo = recovery.previousMovedTo { message += "; moved aside to \(previousMovedTo)" }
        }
        message +=
            recovery.source == .cleanStart
            ? "; starting clean (the data in the moved files is not used)"
            : "; recovered from the previous copy"
        diagnose(program, message)
        output.emit(
            Event(
                .stateRecovered,
                [
                    ("path", .string(path)), ("reason", .string(clipped(recovery.reason, to: 300))),
                    ("movedTo", recovery.movedTo.map { .string($0) } ?? .null),
                    ("from", .string(recovery.source.rawValue)),
                    ("previousReason", recovery.previousReason.map { .string(clipped($0, to: 300)) } ?? .null),
                    ("previousMovedTo", recovery.previousMovedTo.map { .string($0) } ?? .null),
                ]))
        return loaded
    }
}
