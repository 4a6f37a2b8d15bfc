// SPDX-License-Identifier: Apache-2.0

#ifndef SLEEPTAP_CLINUXPROCESS_SHIM_H
#define SLEEPTAP_CLINUXPROCESS_SHIM_H

#if defined(__linux__)
#include <sys/prctl.h>

/// prctl(2) is variadic, which Swift cannot import: PR_SET_PDEATHSIG re-exported here.
/// Asks the kernel to send `signal` to this process when its parent thread exits (0 clears it).
/// Returns 0, or -1 with errno set.
static inline int CLinuxProcess_setParentDeathSignal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}
#endif

#endif
