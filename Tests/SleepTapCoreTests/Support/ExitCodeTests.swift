// SPDX-License-Identifier: Apache-2.0

import SleepTapCore
import Testing

@Suite("Exit codes")
struct ExitCodeTests {
    @Test("The named exit codes have the values of sysexits.h and stdlib.h")
    func sysexitsValues() {
        #expect(ExitCode.ok.rawValue == 0)  // EXIT_SUCCESS
        #expect(ExitCode.failure.rawValue == 1)  // EXIT_FAILURE
        #expect(ExitCode.usage.rawValue == 64)  // EX_USAGE
        #expect(ExitCode.dataError.rawValue == 65)  // EX_DATAERR
        #expect(ExitCode.unavailable.rawValue == 69)  // EX_UNAVAILABLE
        #expect(ExitCode.software.rawValue == 70)  // EX_SOFTWARE
        #expect(ExitCode.cantCreate.rawValue == 73)  // EX_CANTCREAT
        #expect(ExitCode.ioError.rawValue == 74)  // EX_IOERR
    }
}
