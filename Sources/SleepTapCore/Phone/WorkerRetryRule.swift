// SPDX-License-Identifier: Apache-2.0

package import SleepTapOS

/// The refresh job's Android Worker: which `Result` it returns after a run (the app's policy,
/// not the OS's: WorkManager only acts on the result, `AndroidWorkScheduler`).
///
/// In Kotlin: success when the work returns; on `IOException` (a network error)
/// `if (runAttemptCount < 3) Result.retry() else Result.failure()`; any other exception is not
/// caught by the worker, and WorkManager turns a thrown exception into `Result.failure()`
/// (Android, `ListenableWorker.Result`; androidx `WorkerWrapper`).
///
/// "At most 3 attempts" read precisely: `runAttemptCount` is 0 on the first run, so the runs with
/// counts 0, 1 and 2 may retry and the run with count 3 fails: at most 3 retries, 4 runs in all,
/// before the work gives up for this period (periodic work then resets the count and moves on).
package enum WorkerRetryRule {
    /// Retries allowed for network errors: `runAttemptCount < maxRetries` retries.
    package static let maxRetries = 3

    /// The worker's result.
    /// - Parameters:
    ///   - networkError: nil = no error (success); true = a network error (`IOException`);
    ///     false = any other error.
    ///   - runAttemptCount: WorkManager's `runAttemptCount` for this run (0 on the first try).
    /// - Returns: `.success`; `.retry` for a network error while `runAttemptCount < 3`; `.failure` otherwise.
    package static func result(networkError: Bool?, runAttemptCount: Int) -> RunOutcome {
        guard let networkError else { return .success }
        return networkError && runAttemptCount < maxRetries ? .retry : .failure
    }
}
