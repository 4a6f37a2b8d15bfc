// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif
#if os(Linux)
    internal import CLinuxProcess
#endif

/// Ends this process with the tool that spawned it (sleeptap-demo, sleeptap-soak, the tests), so
/// that no phone or watch outlives it, even when it is killed with SIGKILL.
///
/// A spawning tool sets `SLEEPTAP_PARENT_PID` to its own pid. Foundation's `Process` has no hook
/// that runs in the child before exec, so the child itself asks at start-up for SIGTERM when its
/// parent dies (`prctl(PR_SET_PDEATHSIG)`, prctl(2); SIGTERM then stops it cleanly through the
/// `SignalTrap`), and then checks that its parent is still the expected one: if the parent died
/// before the request, the signal will never come (the race window prctl(2) describes).
enum ParentProcess {
    /// The environment variable a spawning tool sets to its pid.
    static let environmentVariable = "SLEEPTAP_PARENT_PID"

    /// Requests the parent-death signal when `SLEEPTAP_PARENT_PID` is set.
    /// - Parameter warn: told when the variable is set but is not a pid (an integer above 1): it
    ///   is ignored, and this process will not stop with the one that started it.
    /// - Returns: nil to go on; a message when the spawning process has already exited (the
    ///   caller stops). When this process was started through another program (a shell, env(1))
    ///   while the spawning process is alive, the signal follows that program: it goes on.
    static func bind(warn: (String) -> Void) -> String? {
        guard let text = ProcessInfo.processInfo.environment[environmentVariable] else { return nil }
        guard let expected = Int32(text), expected > 1 else {
            warn(
                "\(environmentVariable)=\(clipped(text, to: 40).debugDescription) is not a process id (an integer "
                    + "above 1); ignored: this process will not stop when the process that started it does")
            return nil
        }
        #if os(Linux)
            _ = CLinuxProcess_setParentDeathSignal(SIGTERM)
        #endif
        if getppid() == expected { return nil }
        if kill(expected, 0) == 0 || errno == EPERM { return nil }
        return "the process that started this one (\(environmentVariable)=\(expected)) has already exited; stopping"
    }
}
