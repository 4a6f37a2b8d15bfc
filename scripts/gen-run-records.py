#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes synthetic run records (docs/metrics.md) for benchmarking sleeptap-report.

usage: gen-run-records.py DIR RECORDS [--end YYYY-MM-DD] [--seed S]

Spreads about RECORDS records over devices and the 14 UTC days ending with --end (default
today, UTC): one file per device per day, DIR/metrics/bg_runs/<device>-<day>.json, in the
format's one spelling. Seeded: the same arguments give the same files. Not a simulation (that is
sleeptap-fleet): the numbers only have the right shapes.
"""
import datetime
import os
import random
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    root, total = args[0], int(args[1])
    end = datetime.datetime.now(datetime.timezone.utc).date()
    seed = 1
    if "--end" in args:
        end = datetime.date.fromisoformat(args[args.index("--end") + 1])
    if "--seed" in args:
        seed = int(args[args.index("--seed") + 1])
    rng = random.Random(seed)
    out = os.path.join(root, "metrics", "bg_runs")
    os.makedirs(out, exist_ok=True)
    per_file = 10
    days = [end - datetime.timedelta(days=13 - i) for i in range(14)]
    devices = max(1, total // (per_file * len(days)))
    buckets = ["active", "working_set", "frequent", "rare", "restricted"]
    written = 0
    for d in range(devices):
        device = "dev-%06d" % d
        android = d % 5 < 2
        platform = "android" if android else "ios"
        for day in days:
            lines = []
            for i in range(per_file):
                at = "%sT%02d:%02d:%02d.%03dZ" % (day.isoformat(), 6 + i, rng.randrange(60), rng.randrange(60), rng.randrange(1000))
                kind = ["submitted", "background", "foreground", "foreground", "submitted", "background",
                        "foreground", "dropped", "submit_failed", "foreground"][i]
                bucket = '"%s"' % rng.choice(buckets) if android else "null"
                staleness = "null" if rng.random() < 0.02 else repr(round(rng.expovariate(1 / 14), 3))
                ebd = '"%sT05:00:00.000Z"' % day.isoformat() if kind in ("submitted", "background", "dropped") else "null"
                success = ("true" if rng.random() < 0.9 else "false") if kind == "background" else "null"
                expired = ("true" if rng.random() < 0.05 else "false") if kind == "background" else "null"
                reason = '"unavailable"' if kind == "submit_failed" else "null"
                attempt = "0" if android and kind in ("background", "dropped") else "null"
                lines.append(
                    '{"at":"%s","attempt":%s,"bucket":%s,"device":"%s","earliestBeginDate":%s,"expired":%s,'
                    '"kind":"%s","lowPower":false,"platform":"%s","reason":%s,"stalenessHours":%s,"success":%s}'
                    % (at, attempt, bucket, device, ebd, expired, kind, platform, reason, staleness, success))
            written += len(lines)
            with open(os.path.join(out, "%s-%s.json" % (device, day.isoformat())), "w") as f:
                f.write("[\n" + ",\n".join(lines) + "\n]\n")
    print("%d records in %d files under %s" % (written, devices * len(days), out))


if __name__ == "__main__":
    main()
