// SPDX-License-Identifier: Apache-2.0

import SleepTapOS
import Testing

@testable import SleepTapCore

/// `WorkerRetryRule`: the refresh job's Android Worker.
@Suite("The refresh job's Android Worker")
struct WorkerRetryRuleTests {
    @Test(
        "Network errors retry while runAttemptCount < 3 (4 runs), then fail; other errors fail",
        arguments: [
            (nil, 0, RunOutcome.success), (nil, 5, .success), (true, 0, .retry), (true, 1, .retry), (true, 2, .retry),
            (true, 3, .failure), (true, 4, .failure), (false, 0, .failure), (false, 2, .failure),
        ] as [(Bool?, Int, RunOutcome)])
    func workerRule(networkError: Bool?, attempt: Int, expected: RunOutcome) {
        #expect(WorkerRetryRule.result(networkError: networkError, runAttemptCount: attempt) == expected)
    }
}
