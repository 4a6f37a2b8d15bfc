#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Self-tests of watch_client.py: its BATCH validation, and its watch rules against a fake phone.

Run: /usr/bin/python3 Tests/Interop/test_watch_client.py  (stdlib unittest, needs python3-zmq).
InteropTests.swift runs it; the real Swift phone is exercised there too.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import zmq  # noqa: E402
from zmq.utils.monitor import recv_monitor_message  # noqa: E402

import watch_client as wc  # noqa: E402

# The BATCH example of docs/protocol.md (06:30 EST on both days: DST starts on 2025-03-09).
DOC_BATCH = {
    "v": 1,
    "type": "BATCH",
    "epoch": "9f86d081884c7d65",
    "seq": 3,
    "generatedAt": "2025-03-06T17:00:00Z",
    "timeZone": "America/New_York",
    "entries": [
        {"wake": "2025-03-07T11:30:00Z", "localDate": "2025-03-07", "localTime": "06:30",
         "timeZone": "America/New_York", "utcOffset": -18000},
        {"wake": "2025-03-08T11:30:00Z", "localDate": "2025-03-08", "localTime": "06:30",
         "timeZone": "America/New_York", "utcOffset": -18000},
    ],
}
# The doc's digest of DOC_BATCH.
DOC_DIGEST = "13161eb3ed2064dc"


def batch(**changes):
    message = copy.deepcopy(DOC_BATCH)
    message.update(changes)
    return message


def entry(wake, local_date, local_time, zone=None, offset=-18000):
    item = {"wake": wake, "localDate": local_date, "localTime": local_time, "utcOffset": offset}
    if zone is not None:
        item["timeZone"] = zone
    return item


class DecodeTests(unittest.TestCase):
    def rejects(self, data):
        with self.assertRaises(wc.Violation):
            wc.validate_envelope(wc.decode(data))

    def test_envelope(self):
        self.assertEqual(wc.validate_envelope(wc.decode(b'{"v":1,"type":"UP_TO_DATE","seq":3}')), "UP_TO_DATE")
        self.assertEqual(wc.validate_envelope(wc.decode(b'{"v":1,"type":"ERROR","reason":"x","new":[1]}')), "ERROR")
        for data in (
            b'{"v":2,"type":"BATCH"}', b'{"v":"1","type":"BATCH"}', b'{"v":1.0,"type":"BATCH"}',
            b'{"v":1e0,"type":"BATCH"}', b'{"v":true,"type":"BATCH"}', b'{"type":"BATCH"}',
            b'{"v":1,"type":"batch"}', b'{"v":1,"type":7}', b'{"v":1}', b"[1]", b'"BATCH"',
            b'{"v":1,"type":"BATCH"', b'{"v":NaN,"type":"BATCH"}', b'\xff{"v":1}', b"",
        ):
            with self.subTest(data=data):
                self.rejects(data)

    def test_duplicate_keys_are_refused(self):
        for data in (
            b'{"v":1,"v":1,"type":"HELLO","lastSeq":0}',
            b'{"v":1,"type":"HELLO","lastSeq":0,"type":"ACK"}',
            b'{"v":1,"type":"BATCH","entries":[{"wake":"a","wake":"b"}]}',
            b'{"v":1,"type":"PING","\\u0076":1}',
        ):
            with self.subTest(data=data):
                with self.assertRaises(wc.Violation) as caught:
                    wc.decode(data)
                self.assertIn("appears twice", str(caught.exception))
        self.assertEqual(wc.decode(b'{"a":{"a":1},"b":[{"a":1},{"a":2}]}')["b"][1]["a"], 2)

    def test_integer_bounds(self):
        self.assertEqual(wc.field_int(wc.decode(b'{"n":9007199254740991}'), "n"), 2**53 - 1)
        for data in (b'{"n":9007199254740992}', b'{"n":-1}', b'{"n":1.5}', b'{"n":10E2}', b'{"n":null}'):
            with self.subTest(data=data), self.assertRaises(wc.Violation):
                wc.field_int(wc.decode(data), "n")

    def test_instants(self):
        for text, utc in (
            ("2025-03-07T11:30:00Z", "2025-03-07T11:30:00Z"),
            ("2025-03-07T11:30:00.250Z", "2025-03-07T11:30:00.25Z"),
            ("2025-03-07T06:30:00-05:00", "2025-03-07T11:30:00Z"),
            ("2025-03-07T12:30:00+01:00", "2025-03-07T11:30:00Z"),
        ):
            with self.subTest(text=text):
                self.assertEqual(wc.format_instant(wc.parse_instant(text, "wake")), utc)
        for text in ("2025-03-07T11:30Z", "2025-03-07 11:30:00Z", "2025-03-07T11:30:00", "2025-02-29T11:30:00Z",
                     "2025-03-07T24:00:00Z", "2025-03-07t11:30:00z", "1741347000",
                     # the doc allows the offset only as ±hh:mm
                     "2025-03-07T12:30:00+0100", "2025-03-07T12:30:00+01", "2025-03-07T11:30:00.1234567890Z"):
            with self.subTest(text=text), self.assertRaises(wc.Violation):
                wc.parse_instant(text, "wake")


class BatchTests(unittest.TestCase):
    def rejects(self, message):
        with self.assertRaises(wc.Violation) as caught:
            wc.validate_batch(message)
        return str(caught.exception)

    def test_doc_example_is_valid(self):
        summary = wc.validate_batch(DOC_BATCH)
        self.assertEqual(summary["seq"], 3)
        self.assertEqual(wc.hex64(summary["epoch"]), "9f86d081884c7d65")
        self.assertEqual(wc.hex64(summary["digest"]), DOC_DIGEST)
        self.assertTrue(summary["zoneKnown"])
        self.assertEqual(summary["count"], 2)
        self.assertEqual(summary["coverageEnd"], "2025-03-08T11:30:00Z")

    def test_empty_and_optional_entry_zone(self):
        self.assertIsNone(wc.validate_batch(batch(entries=[]))["coverageEnd"])
        plain = batch(entries=[entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30")])
        self.assertEqual(wc.validate_batch(plain)["count"], 1)

    def test_wake_too_far_ahead(self):
        # generatedAt 2025-03-06T17:00:00Z: 74 x 24 h later is 2025-05-19T17:00:00Z.
        within = batch(entries=[entry("2025-05-19T11:30:00Z", "2025-05-19", "11:30", None, 0)])
        self.assertEqual(wc.validate_batch(within)["count"], 1)
        for wake, date in (("2025-05-20T11:30:00Z", "2025-05-20"), ("9999-12-31T11:30:00Z", "9999-12-31")):
            with self.assertRaises(wc.Violation) as caught:
                wc.validate_batch(batch(entries=[entry(wake, date, "11:30", None, 0)]))
            self.assertIn("more than 74 days after generatedAt", str(caught.exception))

    def test_error_reason_clipped(self):
        self.assertEqual(wc.clipped_reason("field seq must be >= 1"), "field seq must be >= 1")
        for text in ("A" * 70000, "\U0001F600" * 5000):
            sent = wc.clipped_reason(text)
            self.assertTrue(sent.endswith("\u2026"))
            self.assertLessEqual(len(sent.encode("utf-8")), wc.MAX_REASON_BYTES)
            self.assertTrue(text.startswith(sent[:-1]))

    def test_fnv1a64_reference_values(self):
        self.assertEqual(wc.hex64(wc.fnv1a64(b"")), "cbf29ce484222325")
        self.assertEqual(wc.hex64(wc.fnv1a64(b"a")), "af63dc4c8601ec8c")

    def test_zone_unknown_here_is_kept(self):
        # A well-formed zone name this tz database lacks: the dates stay, at the sent offset.
        unknown = batch(timeZone="America/Nowhere_New", generatedAt="2026-06-20T12:00:00Z",
                        entries=[entry("2026-06-20T22:00:00Z", "2026-06-21", "07:00", "America/Nowhere_New", 32400)])
        summary = wc.validate_batch(unknown)
        self.assertFalse(summary["zoneKnown"])
        self.assertEqual(summary["count"], 1)

    def test_dst_gap_shift(self):
        # 02:30 does not exist on 2025-03-09 in New York: the wake-up is shifted to 03:30 EDT.
        shifted = batch(entries=[entry("2025-03-09T07:30:00Z", "2025-03-09", "03:30", "America/New_York", -14400)])
        self.assertEqual(wc.validate_batch(shifted)["count"], 1)

    def test_seq(self):
        for seq in (0, -1, "3", True, None, 2**53):
            with self.subTest(seq=seq):
                self.rejects(batch(seq=seq))
        self.rejects(wc.decode(json.dumps(DOC_BATCH).replace('"seq": 3', '"seq": 3.0').encode()))
        missing = batch()
        del missing["seq"]
        self.rejects(missing)

    def test_fields(self):
        for changes in (
            {"generatedAt": "yesterday"}, {"generatedAt": None}, {"timeZone": "EST"}, {"timeZone": "GMT+5"},
            {"timeZone": "+09:00"}, {"timeZone": "America/"}, {"timeZone": "/Tokyo"}, {"timeZone": "Asia/9x"},
            {"timeZone": ""}, {"timeZone": 5}, {"entries": {}}, {"entries": None},
            {"epoch": "9F86D081884C7D65"}, {"epoch": "9f86d081"}, {"epoch": 7}, {"epoch": None},
            {"entries": ["2025-03-07T11:30:00Z"]},
        ):
            with self.subTest(changes=changes):
                self.rejects(batch(**changes))

    def test_entries(self):
        e1 = entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30")
        e2 = entry("2025-03-08T11:30:00Z", "2025-03-08", "06:30")
        cases = {
            "not increasing": [e2, e1],
            "equal wakes": [e1, dict(e1)],
            "same localDate twice": [e1, entry("2025-03-07T15:30:00Z", "2025-03-07", "10:30")],
            "localDate format": [entry("2025-03-07T11:30:00Z", "2025-3-7", "06:30")],
            "localDate not real": [entry("2025-03-07T11:30:00Z", "2025-02-30", "06:30")],
            "localTime format": [entry("2025-03-07T11:30:00Z", "2025-03-07", "6:30")],
            "localTime range": [entry("2025-03-07T11:30:00Z", "2025-03-07", "24:30")],
            "localTime with seconds": [entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30:00")],
            "local time disagrees": [entry("2025-03-07T11:30:00Z", "2025-03-07", "07:30")],
            "local date disagrees": [entry("2025-03-07T11:30:00Z", "2025-03-06", "06:30")],
            "entry zone differs": [entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30", "America/Chicago")],
            "offset disagrees": [entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30", offset=-14400)],
            "offset missing": [{"wake": "2025-03-07T11:30:00Z", "localDate": "2025-03-07", "localTime": "06:30"}],
            "offset out of range": [entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30", offset=64801)],
            "offset not integer": [entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30", offset="-05:00")],
            "entry zone not string": [entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30", 1)],
            "missing wake": [{"localDate": "2025-03-07", "localTime": "06:30"}],
            "too many": [
                entry("%sT11:30:00Z" % day, day, "06:30")
                for day in ("2025-%02d-%02d" % (1 + i // 28, 1 + i % 28) for i in range(65))
            ],
        }
        for name, entries in cases.items():
            with self.subTest(name):
                self.rejects(batch(entries=entries))
        # 64 entries is the maximum, not a violation.
        self.assertEqual(wc.validate_batch(batch(entries=cases["too many"][:64]))["count"], 64)

    def test_entry_zone_must_be_the_batch_zone(self):
        # The doc: an entry's timeZone, if present, must equal the batch's.
        berlin = entry("2025-03-07T11:30:00Z", "2025-03-07", "12:30", "Europe/Berlin", 3600)
        self.assertIn("differs", self.rejects(batch(entries=[berlin])))


class RequestTests(unittest.TestCase):
    DOC_REQUEST = {"v": 1, "type": "REQUEST", "id": 1, "nightsLeft": 2, "coverageEnd": "2025-03-13T10:30:00Z"}

    def test_doc_example_is_valid(self):
        obj = wc.decode(json.dumps(self.DOC_REQUEST).encode())
        self.assertEqual(wc.validate_envelope(obj), "REQUEST")
        self.assertEqual(wc.validate_request(obj), {"id": 1, "nightsLeft": 2, "coverageEnd": "2025-03-13T10:30:00Z"})
        # coverageEnd null or absent: an empty batch.
        for changes in ({"coverageEnd": None}, {}):
            message = {k: v for k, v in self.DOC_REQUEST.items() if k != "coverageEnd"}
            message.update(changes)
            self.assertIsNone(wc.validate_request(message)["coverageEnd"])

    def test_every_malformed_request_is_refused(self):
        kinds = [kind for kind in wc.MALFORMED if kind.startswith("request-")]
        self.assertGreaterEqual(len(kinds), 5)
        for kind in kinds:
            with self.subTest(kind=kind):
                obj = wc.decode(wc.MALFORMED[kind][0])
                self.assertEqual(wc.validate_envelope(obj), "REQUEST")
                with self.assertRaises(wc.Violation):
                    wc.validate_request(obj)

    def test_bounds(self):
        for nights, ok in ((0, True), (64, True), (65, False)):
            message = dict(self.DOC_REQUEST, nightsLeft=nights)
            if ok:
                self.assertEqual(wc.validate_request(message)["nightsLeft"], nights)
            else:
                self.assertRaises(wc.Violation, wc.validate_request, message)
        self.assertRaises(wc.Violation, wc.validate_request, dict(self.DOC_REQUEST, id=wc.MAX_INT + 1))
        self.assertRaises(wc.Violation, wc.validate_request, wc.decode(b'{"v":1,"type":"REQUEST","id":1.0,"nightsLeft":1}'))

    def test_make_request_counts_the_wake_ups_ahead(self):
        held = {"message": json.dumps(DOC_BATCH), "coverageEnd": "2025-03-08T11:30:00Z"}
        at = wc.parse_instant("2025-03-07T12:00:00Z", "now")  # after the first wake-up, before the second
        self.assertEqual(wc.make_request(4, held, at),
                         {"v": 1, "type": "REQUEST", "id": 4, "nightsLeft": 1, "coverageEnd": "2025-03-08T11:30:00Z"})
        self.assertEqual(wc.make_request(1, None, at)["nightsLeft"], 0)


class FakePhone:
    """A ROUTER on an ipc endpoint in a private temp dir, talking to one watch_client.py."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="st-py-")
        self.endpoint = "ipc://%s/phone.sock" % self.dir
        self.context = zmq.Context()
        self.router = self.context.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 0)
        self.router.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.router.bind(self.endpoint)
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "watch_client.py"), self.endpoint, "--timeout", "8"] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.peer = None

    def receive(self, timeout=5.0):
        """The next message from the watch, decoded."""
        if not self.router.poll(int(timeout * 1000)):
            raise AssertionError("no message from the watch within %.1f s" % timeout)
        frames = self.router.recv_multipart()
        self.peer = frames[0]
        return json.loads(frames[1])

    def receive_type(self, kind, timeout=5.0):
        """Skips Lazy Pirate HELLO repeats until a message of `kind`."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.05, deadline - time.monotonic()))
            if message["type"] == kind:
                return message
            if message["type"] != "HELLO" or time.monotonic() > deadline:
                raise AssertionError("expected %s, got %s" % (kind, message))

    def send(self, *frames):
        encoded = [f if isinstance(f, bytes) else json.dumps(f).encode() for f in frames]
        self.router.send_multipart([self.peer] + encoded)

    def finish(self, timeout=5.0):
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
        events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
        return self.process.returncode, events, err.decode()

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()
        self.router.close(linger=0)
        self.context.term()
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)


class WatchRuleTests(unittest.TestCase):
    def setUp(self):
        self.phone = None

    def tearDown(self):
        if self.phone is not None:
            self.phone.close()

    def hello(self, message):
        """A HELLO without its optional sentAt, after checking that sentAt is an ISO-8601 UTC instant."""
        self.assertEqual(message.get("type"), "HELLO", message)
        self.assertRegex(message.get("sentAt", ""), r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", message)
        return {key: value for key, value in message.items() if key != "sentAt"}

    def start(self, *args):
        self.phone = FakePhone(*args)
        hello = self.hello(self.phone.receive())
        self.assertEqual(hello, {"v": 1, "type": "HELLO", "lastSeq": 0})
        return self.phone

    def test_apply_duplicate_stale_up_to_date(self):
        phone = self.start("--batches", "2")
        phone.send(batch(seq=1))
        self.assertEqual(phone.receive_type("ACK"),
                         {"v": 1, "type": "ACK", "epoch": "9f86d081884c7d65", "seq": 1, "digest": DOC_DIGEST,
                          "coverageEnd": "2025-03-08T11:30:00Z"})
        phone.send(batch(seq=1))  # a resend: ACK again
        self.assertEqual(phone.receive_type("ACK")["seq"], 1)
        phone.send({"v": 1, "type": "UP_TO_DATE", "seq": 1})
        phone.send({"v": 1, "type": "ERROR", "reason": "just saying"})  # changes nothing, no answer
        phone.send(batch(seq=0 + 5, entries=[]))
        ack = phone.receive_type("ACK")
        self.assertEqual((ack["seq"], ack["coverageEnd"]), (5, None))
        self.assertEqual(ack["digest"], wc.hex64(wc.digest_of("America/New_York", [])))
        status, events, err = phone.finish()
        self.assertEqual(status, 0, err)
        names = [event["event"] for event in events]
        self.assertIn("batch.duplicate", names)
        self.assertIn("sync.up_to_date", names)
        self.assertIn("peer.error", names)
        self.assertEqual([e["seq"] for e in events if e["event"] == "batch.applied"], [1, 5])
        # The doc's event lines: event, time (UTC, milliseconds), source first, in that order.
        for event in events:
            self.assertEqual(list(event)[:3], ["event", "time", "source"], event)
            self.assertEqual(event["source"], "watch", event)
            self.assertRegex(event["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", event)

    def test_stale_batch_is_ignored_and_answered_with_hello(self):
        phone = self.start("--batches", "3")
        phone.send(batch(seq=4))
        self.assertEqual(phone.receive_type("ACK")["seq"], 4)
        phone.send(batch(seq=2))
        self.assertEqual(self.hello(phone.receive()),
                         {"v": 1, "type": "HELLO", "lastSeq": 4, "epoch": "9f86d081884c7d65", "digest": DOC_DIGEST})

    def test_epochs_and_conflicts(self):
        phone = self.start("--batches", "2")
        phone.send(batch(seq=7))
        self.assertEqual(phone.receive_type("ACK")["seq"], 7)
        # The same (epoch, seq) with other dates: kept what it holds, and says so in the ACK.
        other = batch(seq=7, entries=[entry("2025-03-07T11:30:00Z", "2025-03-07", "06:30")])
        phone.send(other)
        self.assertEqual(phone.receive_type("ACK")["digest"], DOC_DIGEST)
        # Another epoch with a lower seq replaces it: the phone started a new numbering.
        phone.send(batch(seq=1, epoch="00000000000000a1"))
        ack = phone.receive_type("ACK")
        self.assertEqual((ack["epoch"], ack["seq"]), ("00000000000000a1", 1))
        status, events, err = phone.finish()
        self.assertEqual(status, 0, err)
        self.assertIn("batch.conflict", [event["event"] for event in events])

    def test_invalid_batch_is_answered_with_error_and_exit_2(self):
        phone = self.start()
        bad = batch(seq=1)
        bad["entries"].reverse()
        phone.send(bad)
        error = phone.receive_type("ERROR")
        self.assertIn("strictly increasing", error["reason"])
        status, events, _ = phone.finish()
        self.assertEqual(status, 2)
        self.assertIn("message.rejected", [event["event"] for event in events])
        self.assertNotIn("batch.applied", [event["event"] for event in events])

    def test_wrong_role_and_multipart_are_violations(self):
        ack = {"v": 1, "type": "ACK", "epoch": "9f86d081884c7d65", "seq": 1, "digest": DOC_DIGEST, "coverageEnd": None}
        for frames in ((ack,), (batch(seq=1), batch(seq=1))):
            with self.subTest(frames=len(frames)):
                self.phone = FakePhone()
                self.phone.receive()
                self.phone.send(*frames)
                self.assertEqual(self.phone.receive_type("ERROR")["type"], "ERROR")
                self.assertEqual(self.phone.finish()[0], 2)
                self.phone.close()
                self.phone = None

    def test_request_is_sent_after_the_batches_and_answered_by_a_batch(self):
        phone = self.start("--request")
        phone.send(batch(seq=1))
        self.assertEqual(phone.receive_type("ACK")["seq"], 1)
        request = phone.receive_type("REQUEST")
        self.assertEqual(wc.validate_request(request)["coverageEnd"], "2025-03-08T11:30:00Z")
        self.assertEqual((request["id"], request["nightsLeft"]), (1, 0))  # 2025 is long past
        phone.send({"v": 1, "type": "ERROR", "reason": "REQUEST 1 not served: just saying"})
        phone.send(batch(seq=2))  # the answer
        self.assertEqual(phone.receive_type("ACK")["seq"], 2)
        status, events, err = phone.finish()
        self.assertEqual(status, 0, err)
        names = [event["event"] for event in events]
        self.assertEqual(names.count("request.sent"), 1)
        self.assertIn("peer.error", names)
        self.assertLess(names.index("request.sent"), [i for i, n in enumerate(names) if n == "batch.applied"][1])

    def test_request_to_a_watch_is_a_violation(self):
        phone = self.start()
        phone.send(RequestTests.DOC_REQUEST)
        self.assertIn("not valid for a watch", phone.receive_type("ERROR")["reason"])
        self.assertEqual(phone.finish()[0], 2)

    def test_state_file_survives_a_restart(self):
        state = os.path.join(tempfile.mkdtemp(prefix="st-py-state-"), "watch.json")
        try:
            phone = self.start("--state", state)
            phone.send(batch(seq=2, later={"minor": 1.5}))  # an unknown field, not an integer: ignored
            self.assertEqual(phone.receive_type("ACK")["seq"], 2)
            self.assertEqual(phone.finish()[0], 0)
            with open(state) as handle:
                self.assertEqual(json.load(handle)["lastSeq"], 2)
            phone.close()
            self.phone = FakePhone("--state", state, "--batches", "0")
            self.assertEqual(self.hello(self.phone.receive()),
                             {"v": 1, "type": "HELLO", "lastSeq": 2, "epoch": "9f86d081884c7d65", "digest": DOC_DIGEST})
            self.phone.send(batch(seq=2))  # the stored batch again: ACKed with the stored coverage
            self.assertEqual(self.phone.receive_type("ACK")["coverageEnd"], "2025-03-08T11:30:00Z")
        finally:
            if os.path.exists(state):
                os.unlink(state)
            os.rmdir(os.path.dirname(state))

    def test_invalid_error_is_never_answered(self):
        phone = self.start()
        # The end of the watch's connection is the probe: one connection delivers in order, so once
        # the router reports it ended, all the watch sent before is already queued on the router.
        ends = phone.router.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        try:
            phone.send({"v": 1, "type": "ERROR"})
            status, events, _ = phone.finish()
            self.assertEqual(status, 2)
            self.assertIn("message.rejected", [event["event"] for event in events])
            self.assertNotIn("error.sent", [event["event"] for event in events])
            self.assertTrue(ends.poll(5000), "the watch's connection did not end within 5 s")
            self.assertEqual(recv_monitor_message(ends)["event"], zmq.EVENT_DISCONNECTED)
            sent = []
            while phone.router.poll(0):
                sent.append(json.loads(phone.router.recv_multipart()[1])["type"])
            self.assertNotIn("ERROR", sent, "the watch answered an ERROR with an ERROR")
        finally:
            phone.router.disable_monitor()
            ends.close(linger=0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
