// SPDX-License-Identifier: Apache-2.0

#ifndef SLEEPTAP_CZEROMQ_SHIM_H
#define SLEEPTAP_CZEROMQ_SHIM_H

#include <zmq.h>

/// ZMQ_VERSION is a function-like macro that Swift cannot import; re-exported here.
static inline int CZeroMQ_headerVersion(void) { return ZMQ_VERSION; }

/// ZMQ_MAKE_VERSION is function-like too.
static inline int CZeroMQ_makeVersion(int major, int minor, int patch) {
    return ZMQ_MAKE_VERSION(major, minor, patch);
}

#endif
