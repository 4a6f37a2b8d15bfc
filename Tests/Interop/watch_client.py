#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A SleepTap watch written from docs/protocol.md alone (wire protocol version 1), with pyzmq.

Usage: watch_client.py ENDPOINT [--id watch] [--batches N] [--timeout SECONDS]
                       [--malformed KIND] [--state PATH] [--request]

Connects a DEALER with the given routing id, sends HELLO (what it holds: lastSeq, epoch, digest)
on every completed handshake and every 2 s until a reply arrives, validates each BATCH, stores the
newest (in memory, and durably in --state PATH when given) and ACKs exactly what it stored. Prints one JSON object per line on stdout,
`{"event": NAME, "time": ..., "source": "watch", ...fields}`, as the Swift watch does.

Exit status: 0 once N batches were applied (and, with --malformed, once the phone answered the
malformed message with an ERROR); 1 on timeout; 2 when the phone broke the protocol (the
offending message is answered with ERROR first, unless it was itself an ERROR); 3 on bad usage.

--malformed KIND: once N batches were applied, send one deliberately invalid message to the phone
and wait for its ERROR. Kinds: see MALFORMED below.

--request: once N batches were applied, send one REQUEST {id, nightsLeft, coverageEnd} (the doc's
"REQUEST") and exit 0 when the phone's answer, one more batch, is applied. An ERROR in answer is
reported (peer.error) and the client keeps waiting until --timeout.

Needs /usr/bin/python3 with python3-zmq (Debian): SLEEPTAP_WITH_PYTHON=1 scripts/ensure-deps.sh.
"""

import argparse
import datetime
import json
import os
import re
import signal
import sys
import tempfile
import time

try:
    import zmq
    from zmq.utils.monitor import recv_monitor_message
except ImportError:  # pragma: no cover - reported to the caller, who tells the user what to do
    sys.stderr.write("watch_client.py: no zmq module; run scripts/ensure-deps.sh (python3-zmq)\n")
    sys.exit(3)

try:
    import zoneinfo
except ImportError:  # pragma: no cover - Python < 3.9
    zoneinfo = None

VERSION = 1
MAX_MESSAGE = 65536
MAX_INT = 2**53 - 1
MAX_ENTRIES = 64
# An ERROR's reason: at most 8,192 UTF-8 bytes, a longer one cut at a character and ending in
# "..." as U+2026 (docs/protocol.md, ERROR).
MAX_REASON_BYTES = 8192


def clipped_reason(reason):
    """`reason` cut to MAX_REASON_BYTES UTF-8 bytes at a character, ending in U+2026, when longer."""
    if len(reason.encode("utf-8")) <= MAX_REASON_BYTES:
        return reason
    ellipsis = "\u2026"
    kept, size = [], len(ellipsis.encode("utf-8"))
    for character in reason:
        length = len(character.encode("utf-8"))
        if size + length > MAX_REASON_BYTES:
            break
        kept.append(character)
        size += length
    return "".join(kept) + ellipsis


# An entry's wake at most 74 x 24 h after the batch's generatedAt (docs/protocol.md, BATCH).
MAX_WAKE_AHEAD = datetime.timedelta(hours=74 * 24)
MAX_UTC_OFFSET = 18 * 3600  # seconds
FNV_OFFSET = 14695981039346656037
FNV_PRIME = 1099511628211
HELLO_INTERVAL = 2.0  # s (wall), Lazy Pirate
TYPES = ("HELLO", "BATCH", "ACK", "UP_TO_DATE", "ERROR", "PING", "REQUEST")

# Deliberately invalid messages for the phone (--malformed). Each value is the list of frames.
MALFORMED = {
    "not-json": [b'{"v":1,"type":"ACK","seq":'],
    "not-utf8": [b'{"v":1,"type":"HELLO","lastSeq":"\xff"}'],
    "not-object": [b"[1,2,3]"],
    "bad-version": [b'{"v":2,"type":"HELLO","lastSeq":1}'],
    "unknown-type": [b'{"v":1,"type":"GOODBYE"}'],
    "missing-type": [b'{"v":1,"lastSeq":1}'],
    "ack-seq-zero": [b'{"v":1,"type":"ACK","epoch":"00000000000000a1","seq":0,"digest":"00000000000000a1"}'],
    "ack-no-digest": [b'{"v":1,"type":"ACK","epoch":"00000000000000a1","seq":1,"coverageEnd":null}'],
    "hello-no-epoch": [b'{"v":1,"type":"HELLO","lastSeq":3,"digest":"00000000000000a1"}'],
    "negative-seq": [b'{"v":1,"type":"HELLO","lastSeq":-1}'],
    "fraction-int": [b'{"v":1,"type":"HELLO","lastSeq":1.0}'],
    "exponent-int": [b'{"v":1,"type":"HELLO","lastSeq":1e0}'],
    "bool-int": [b'{"v":1,"type":"HELLO","lastSeq":true}'],
    "too-large-int": [b'{"v":1,"type":"HELLO","lastSeq":9007199254740992}'],
    "bad-instant": [
        b'{"v":1,"type":"ACK","epoch":"00000000000000a1","seq":1,"digest":"00000000000000a1","coverageEnd":"tomorrow"}'
    ],
    "wrong-role": [b'{"v":1,"type":"UP_TO_DATE","seq":1}'],
    "request-id-zero": [b'{"v":1,"type":"REQUEST","id":0,"nightsLeft":1,"coverageEnd":null}'],
    "request-no-id": [b'{"v":1,"type":"REQUEST","nightsLeft":1,"coverageEnd":null}'],
    "request-too-many-nights": [b'{"v":1,"type":"REQUEST","id":1,"nightsLeft":65,"coverageEnd":null}'],
    "request-negative-nights": [b'{"v":1,"type":"REQUEST","id":1,"nightsLeft":-1,"coverageEnd":null}'],
    "request-bad-coverage": [b'{"v":1,"type":"REQUEST","id":1,"nightsLeft":1,"coverageEnd":"2025-02-30T00:00:00Z"}'],
    "request-string-id": [b'{"v":1,"type":"REQUEST","id":"1","nightsLeft":1}'],
    "multipart": [b'{"v":1,"type":"HELLO","lastSeq":1}', b'{"v":1,"type":"HELLO","lastSeq":1}'],
}


class Violation(Exception):
    """A message from the phone that breaks the protocol; str() is the ERROR reason."""


class Stop(Exception):
    """SIGTERM/SIGINT."""


def now_iso():
    """Wall time, ISO-8601 UTC to the millisecond: 2026-07-20T00:30:00.123Z."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000)


def emit(event, **fields):
    """One JSON Lines event: `event` first, `time` (wall, UTC, milliseconds) second, `source` third."""
    record = {"event": event, "time": now_iso(), "source": "watch"}
    record.update(fields)
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# Decoding and validation (docs/protocol.md, "Framing" and "Messages")


class NonInteger:
    """A JSON number written with a fraction or an exponent: never an integer on this wire."""

    def __init__(self, text):
        self.text = text


def _reject_constant(name):
    raise ValueError("not JSON: %s" % name)


def _object_without_duplicate_keys(pairs):
    """json object_pairs_hook: a key given twice in one object is refused (docs/protocol.md,
    "A key must not appear twice in one object"); json alone keeps the last one."""
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError('key "%s" appears twice in one object' % key)
        obj[key] = value
    return obj


def decode(frame):
    """Bytes of one frame -> dict, or Violation."""
    if len(frame) > MAX_MESSAGE:
        raise Violation("message larger than %d bytes" % MAX_MESSAGE)
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError:
        raise Violation("message is not UTF-8")
    try:
        obj = json.loads(
            text,
            parse_float=NonInteger,
            parse_constant=_reject_constant,
            object_pairs_hook=_object_without_duplicate_keys,
        )
    except ValueError as error:
        raise Violation("message is not JSON: %s" % error)
    if not isinstance(obj, dict):
        raise Violation("message is not a JSON object")
    return obj


def field_int(obj, key, minimum=0):
    if key not in obj:
        raise Violation("missing field %s" % key)
    value = obj[key]
    if isinstance(value, NonInteger):
        raise Violation("field %s must be an integer without fraction or exponent (got %s)" % (key, value.text))
    if isinstance(value, bool) or not isinstance(value, int):
        raise Violation("field %s must be an integer" % key)
    if value < minimum:
        raise Violation("field %s must be >= %d" % (key, minimum))
    if value > MAX_INT:
        raise Violation("field %s must be <= %d" % (key, MAX_INT))
    return value


def field_signed(obj, key, bound):
    """An integer that may be negative, |value| <= bound (only `utcOffset`)."""
    if key not in obj:
        raise Violation("missing field %s" % key)
    value = obj[key]
    if isinstance(value, NonInteger) or isinstance(value, bool) or not isinstance(value, int):
        raise Violation("field %s must be an integer" % key)
    if not -bound <= value <= bound:
        raise Violation("field %s must be from -%d to %d" % (key, bound, bound))
    return value


HEX64 = re.compile(r"^[0-9a-f]{16}$")


def field_hex64(obj, key):
    """Exactly 16 lower-case hexadecimal digits (an epoch or a digest) -> int."""
    text = field_str(obj, key)
    if not HEX64.match(text):
        raise Violation("field %s must be 16 lower-case hexadecimal digits" % key)
    return int(text, 16)


def hex64(value):
    return "%016x" % value


def fnv1a64(data):
    value = FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return value


def digest_of(zone_name, entries):
    """The doc's digest: FNV-1a 64 of the zone, a line feed, then `wake localDate localTime utcOffset`
    and a line feed per entry (wake in the canonical whole-second form)."""
    text = zone_name + "\n"
    for item in entries:
        text += "%s %s %s %d\n" % (item["wake"], item["localDate"], item["localTime"], item["utcOffset"])
    return fnv1a64(text.encode("utf-8"))


def field_str(obj, key, optional=False):
    if key not in obj:
        if optional:
            return None
        raise Violation("missing field %s" % key)
    value = obj[key]
    if not isinstance(value, str):
        raise Violation("field %s must be a string" % key)
    return value


INSTANT = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$"
)


def parse_instant(text, key):
    """ISO-8601: whole seconds `...Z`; also accepted: a fraction (1-9 digits) and an offset `±hh:mm`
    instead of `Z` (not `+hhmm`, not `+hh`).

    Calendar and clock fields must be in range (no 2025-02-30, no 24:00, no leap second).
    """
    match = INSTANT.match(text)
    if not match:
        raise Violation("field %s must be an ISO-8601 UTC instant like 2025-03-07T11:30:00Z" % key)
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = match.group(7) or ""
    micro = int((fraction + "000000")[:6]) if fraction else 0
    if match.group(8) == "Z":
        zone = datetime.timezone.utc
    else:
        sign = 1 if match.group(9) == "+" else -1
        off_h, off_m = int(match.group(10)), int(match.group(11))
        if off_h > 23 or off_m > 59:
            raise Violation("field %s has an invalid offset" % key)
        zone = datetime.timezone(sign * datetime.timedelta(hours=off_h, minutes=off_m))
    try:
        value = datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except ValueError:
        raise Violation("field %s is not a real instant" % key)
    return value.astimezone(datetime.timezone.utc)


def format_instant(value):
    """Back to the canonical wire form (whole seconds, `Z`; a fraction only when there is one)."""
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += ("%.6f" % (value.microsecond / 1e6))[1:].rstrip("0")
    return text + "Z"


ZONE_PART = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]*$")


def check_zone_name(name, key):
    """The doc's IANA name form: UTC, GMT or Area/Location[/More]; abbreviations and offsets are refused."""
    if name in ("UTC", "GMT"):
        return
    parts = name.split("/")
    if len(name.encode("utf-8")) > 64 or len(parts) < 2 or not all(ZONE_PART.match(part) for part in parts):
        raise Violation("field %s is not an IANA zone name (Area/Location, UTC or GMT): %s" % (key, name))


def zone_known(name):
    """Whether this machine's tz database knows the zone (a well-formed unknown one is still kept)."""
    if zoneinfo is None:
        return False
    try:
        zoneinfo.ZoneInfo(name)
        return True
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False


LOCAL_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
LOCAL_TIME = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def validate_envelope(obj):
    """`v` and `type`; returns the type."""
    version = field_int(obj, "v")
    if version != VERSION:
        raise Violation("unsupported protocol version %d" % version)
    kind = field_str(obj, "type")
    if kind not in TYPES:
        raise Violation("unknown message type %s" % kind)
    return kind


def validate_batch(obj):
    """Every BATCH rule of the doc; returns a summary dict."""
    epoch = field_hex64(obj, "epoch")
    seq = field_int(obj, "seq", minimum=1)
    generated_at = parse_instant(field_str(obj, "generatedAt"), "generatedAt")
    batch_zone_name = field_str(obj, "timeZone")
    check_zone_name(batch_zone_name, "timeZone")
    if "entries" not in obj:
        raise Violation("missing field entries")
    entries = obj["entries"]
    if not isinstance(entries, list):
        raise Violation("field entries must be an array")
    if len(entries) > MAX_ENTRIES:
        raise Violation("field entries holds %d entries, at most %d" % (len(entries), MAX_ENTRIES))
    previous = None
    dates = set()
    wakes = []
    canonical = []
    for index, entry in enumerate(entries):
        where = "entries[%d]" % index
        if not isinstance(entry, dict):
            raise Violation("%s must be an object" % where)
        try:
            wake = parse_instant(field_str(entry, "wake"), "wake")
            local_date = field_str(entry, "localDate")
            local_time = field_str(entry, "localTime")
            offset = field_signed(entry, "utcOffset", MAX_UTC_OFFSET)
            entry_zone_name = field_str(entry, "timeZone", optional=True)
        except Violation as error:
            raise Violation("%s: %s" % (where, error))
        date_match = LOCAL_DATE.match(local_date)
        if not date_match:
            raise Violation("%s.localDate must be yyyy-MM-dd (got %s)" % (where, local_date))
        try:
            datetime.date(*(int(part) for part in date_match.groups()))
        except ValueError:
            raise Violation("%s.localDate is not a real date: %s" % (where, local_date))
        if not LOCAL_TIME.match(local_time):
            raise Violation("%s.localTime must be HH:MM (got %s)" % (where, local_time))
        if entry_zone_name is not None and entry_zone_name != batch_zone_name:
            raise Violation("%s.timeZone %s differs from the batch's %s" % (where, entry_zone_name, batch_zone_name))
        if previous is not None and wake <= previous:
            raise Violation("%s: entries must be strictly increasing by wake" % where)
        if local_date in dates:
            raise Violation("%s: localDate %s appears twice" % (where, local_date))
        if wake - generated_at > MAX_WAKE_AHEAD:
            raise Violation("%s: wake %s is more than 74 days after generatedAt" % (where, format_instant(wake)))
        # Plain arithmetic: the reading at the sender's offset, whatever this tz database says.
        local = (wake + datetime.timedelta(seconds=offset)).replace(tzinfo=None)
        if local.strftime("%Y-%m-%d") != local_date or local.strftime("%H:%M") != local_time:
            raise Violation(
                "%s: wake %s reads %s at utcOffset %d, not %s %s"
                % (where, format_instant(wake), local.strftime("%Y-%m-%d %H:%M"), offset, local_date, local_time)
            )
        previous = wake
        dates.add(local_date)
        wakes.append(wake)
        canonical.append({"wake": wake.strftime("%Y-%m-%dT%H:%M:%SZ"), "localDate": local_date,
                          "localTime": local_time, "utcOffset": offset})
    return {
        "epoch": epoch,
        "seq": seq,
        "digest": digest_of(batch_zone_name, canonical),
        "generatedAt": format_instant(generated_at),
        "timeZone": batch_zone_name,
        "zoneKnown": zone_known(batch_zone_name),
        "count": len(entries),
        "coverageEnd": format_instant(wakes[-1]) if wakes else None,
        "first": format_instant(wakes[0]) if wakes else None,
    }


def validate_request(obj):
    """Every REQUEST rule of the doc (a watch sends it; a phone validates it); returns a dict."""
    request_id = field_int(obj, "id", minimum=1)
    nights_left = field_int(obj, "nightsLeft")
    if nights_left > MAX_ENTRIES:
        raise Violation("field nightsLeft must be at most %d" % MAX_ENTRIES)
    coverage_end = None
    if obj.get("coverageEnd") is not None:
        coverage_end = format_instant(parse_instant(field_str(obj, "coverageEnd"), "coverageEnd"))
    return {"id": request_id, "nightsLeft": nights_left, "coverageEnd": coverage_end}


def make_request(request_id, held, now):
    """The REQUEST a watch holding `held` (or nothing) sends at `now` (an aware datetime)."""
    wakes = []
    if held:
        for entry in json.loads(held["message"])["entries"]:
            wakes.append(parse_instant(entry["wake"], "wake"))
    request = {"v": VERSION, "type": "REQUEST", "id": request_id,
               "nightsLeft": min(MAX_ENTRIES, sum(1 for wake in wakes if wake > now)),
               "coverageEnd": held["coverageEnd"] if held else None}
    validate_request(request)
    return request


# ---------------------------------------------------------------------------------------------
# Durable storage (optional): write temp, fsync, rename, fsync directory.


def load_state(path):
    """-> the stored batch dict (seq, epoch, digest, message, coverageEnd), or None."""
    if not path or not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        state = json.load(handle)
    return state.get("batch")


def store_state(path, batch):
    if not path:
        return
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    descriptor, temp = tempfile.mkstemp(prefix=".watch-", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(json.dumps({"lastSeq": batch["seq"], "batch": batch}).encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# ---------------------------------------------------------------------------------------------
# The watch


class Watch:
    def __init__(self, args):
        self.args = args
        self.endpoint = args.endpoint
        self.held = load_state(args.state)  # seq, epoch, digest, message, coverageEnd
        self.applied = 0
        self.replied = False  # any reply since the last HELLO round started
        self.next_hello = None  # wall deadline of the next Lazy Pirate HELLO
        self.malformed_sent = False
        self.error_after_malformed = False
        self.request_sent_at = None  # batches applied when the REQUEST left, None before
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        for option, value in (
            (zmq.ROUTING_ID, args.id.encode("utf-8")),
            (zmq.IMMEDIATE, 1),
            (zmq.LINGER, 0),
            (zmq.MAXMSGSIZE, MAX_MESSAGE),
            (zmq.HEARTBEAT_IVL, 1000),
            (zmq.HEARTBEAT_TIMEOUT, 3000),
            (zmq.HEARTBEAT_TTL, 3000),
            (zmq.RECONNECT_IVL, 50),
            (zmq.RECONNECT_IVL_MAX, 1000),
        ):
            self.socket.setsockopt(option, value)
        self.monitor = self.socket.get_monitor_socket(
            zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED
        )

    # -- sending

    def send(self, frames, what):
        try:
            self.socket.send_multipart(frames, flags=zmq.NOBLOCK)
            return True
        except zmq.Again:
            emit("send.failed", type=what, reason="watch not connected")
            return False

    def send_json(self, obj):
        data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        return self.send([data], obj["type"])

    @property
    def last_seq(self):
        return self.held["seq"] if self.held else 0

    def send_hello(self):
        hello = {"v": VERSION, "type": "HELLO", "lastSeq": self.last_seq}
        if self.held:
            hello["epoch"], hello["digest"] = hex64(self.held["epoch"]), hex64(self.held["digest"])
        # Optional (docs/protocol.md, HELLO): this client's now, which runs on the wall clock.
        now = datetime.datetime.now(datetime.timezone.utc)
        hello["sentAt"] = now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000)
        if self.send_json(hello):
            emit("hello.sent", lastSeq=self.last_seq)

    def send_error(self, reason):
        reason = clipped_reason(reason)
        if self.send_json({"v": VERSION, "type": "ERROR", "reason": reason}):
            emit("error.sent", reason=reason)

    def send_ack(self):
        """ACK exactly what is held."""
        held = self.held
        ack = {"v": VERSION, "type": "ACK", "epoch": hex64(held["epoch"]), "seq": held["seq"],
               "digest": hex64(held["digest"]), "coverageEnd": held["coverageEnd"]}
        if self.send_json(ack):
            emit("ack.sent", seq=held["seq"], epoch=ack["epoch"], digest=ack["digest"],
                 coverageEnd=held["coverageEnd"])

    def maybe_send_malformed(self):
        kind = self.args.malformed
        if kind is None or self.malformed_sent or self.applied < self.args.batches or not self.replied:
            return
        frames = MALFORMED[kind]
        if self.send(frames, "malformed"):
            self.malformed_sent = True
            emit("malformed.sent", kind=kind, frames=[f.decode("utf-8", "replace") for f in frames])

    def maybe_send_request(self):
        if not self.args.request or self.request_sent_at is not None or self.applied < self.args.batches:
            return
        request = make_request(1, self.held, datetime.datetime.now(datetime.timezone.utc))
        if self.send_json(request):
            self.request_sent_at = self.applied
            emit("request.sent", id=request["id"], nightsLeft=request["nightsLeft"],
                 coverageEnd=request["coverageEnd"])

    # -- receiving

    def on_link_up(self):
        emit("link.up", endpoint=self.endpoint)
        self.replied = False
        self.send_hello()
        self.next_hello = time.monotonic() + HELLO_INTERVAL

    def on_frames(self, frames):
        """Handles one received message; raises Violation for the phone's protocol errors."""
        if len(frames) != 1:
            raise Violation("expected one frame, got %d" % len(frames))
        obj = decode(frames[0])
        kind_hint = obj.get("type") if isinstance(obj, dict) else None
        try:
            kind = validate_envelope(obj)
        except Violation as error:
            error.is_error_message = kind_hint == "ERROR"
            raise
        emit("message.received", type=kind)
        if kind == "ERROR":
            try:
                reason = field_str(obj, "reason")
            except Violation as error:
                error.is_error_message = True
                raise
            self.replied = True
            emit("peer.error", reason=reason)
            if self.malformed_sent:
                self.error_after_malformed = True
            return
        if kind == "BATCH":
            summary = validate_batch(obj)
            self.replied = True
            self.on_batch(summary, frames[0].decode("utf-8"))
            return
        if kind == "PING":
            # Liveness only: no reply, and not an answer to HELLO.
            return
        if kind == "UP_TO_DATE":
            seq = field_int(obj, "seq", minimum=0)
            self.replied = True
            emit("sync.up_to_date", seq=seq, applied=self.last_seq)
            return
        raise Violation("message type %s is not valid for a watch" % kind)

    def on_batch(self, summary, text):
        """Watch rule 2: another epoch or a higher seq replaces; same seq: duplicate or conflict;
        lower seq: stale, answered with HELLO."""
        seq, held = summary["seq"], self.held
        same_epoch = held is not None and held["epoch"] == summary["epoch"]
        if not same_epoch or seq > held["seq"]:
            # Stored as received (the exact message), with what HELLO and ACK need next to it.
            stored = {"seq": seq, "epoch": summary["epoch"], "digest": summary["digest"], "message": text,
                      "coverageEnd": summary["coverageEnd"]}
            store_state(self.args.state, stored)
            self.held = stored
            self.applied += 1
            emit(
                "batch.applied", seq=seq, epoch=hex64(summary["epoch"]), count=summary["count"],
                coverageEnd=summary["coverageEnd"], timeZone=summary["timeZone"], zoneKnown=summary["zoneKnown"],
                first=summary["first"], generatedAt=summary["generatedAt"], epochChanged=held is not None and not same_epoch,
            )
            self.send_ack()
        elif seq == held["seq"]:
            if summary["digest"] == held["digest"]:
                emit("batch.duplicate", seq=seq, applied=held["seq"])
            else:
                emit("batch.conflict", seq=seq, held=hex64(held["digest"]), received=hex64(summary["digest"]))
            self.send_ack()  # what is held, so a phone with other dates sees the difference
        else:
            emit("batch.stale", seq=seq, applied=held["seq"])
            self.send_hello()

    def done(self):
        if self.applied < self.args.batches:
            return False
        if self.args.malformed is not None:
            return self.error_after_malformed
        if self.args.request:
            return self.request_sent_at is not None and self.applied > self.request_sent_at
        return self.args.batches > 0 or self.replied

    # -- loop

    def run(self):
        emit("watch.started", endpoint=self.endpoint, id=self.args.id, lastSeq=self.last_seq, pid=os.getpid())
        self.socket.connect(self.endpoint)
        deadline = time.monotonic() + self.args.timeout
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self.monitor, zmq.POLLIN)
        while True:
            now = time.monotonic()
            if now >= deadline:
                emit("timeout", seconds=self.args.timeout, applied=self.applied, lastSeq=self.last_seq,
                     malformedSent=self.malformed_sent)
                return 1
            if self.next_hello is not None and not self.replied and now >= self.next_hello:
                self.send_hello()
                self.next_hello = now + HELLO_INTERVAL
            wake = deadline
            if self.next_hello is not None and not self.replied:
                wake = min(wake, self.next_hello)
            ready = dict(poller.poll(max(0, int((wake - now) * 1000)) + 1))
            if self.monitor in ready:
                event = recv_monitor_message(self.monitor)
                if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                    self.on_link_up()
                elif event["event"] == zmq.EVENT_DISCONNECTED:
                    emit("link.down", endpoint=self.endpoint)
            if self.socket in ready:
                frames = self.socket.recv_multipart()
                try:
                    self.on_frames(frames)
                except Violation as error:
                    reason = str(error)
                    emit("message.rejected", reason=reason)
                    if not getattr(error, "is_error_message", False):
                        self.send_error(reason)  # never answer an ERROR with an ERROR
                    emit("protocol.violation", reason=reason)
                    return 2
                self.maybe_send_malformed()
                self.maybe_send_request()
                if self.done():
                    emit("watch.done", applied=self.applied, lastSeq=self.last_seq)
                    return 0

    def close(self, linger_ms):
        try:
            self.socket.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(linger=0)
        self.socket.close(linger=linger_ms)
        self.context.term()


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 3: status 2 means a protocol violation by the phone."""

    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write("%s: error: %s\n" % (self.prog, message))
        sys.exit(3)


def parse_args(argv):
    parser = _Parser(description="SleepTap watch client from docs/protocol.md (pyzmq)")
    parser.add_argument("endpoint", metavar="ENDPOINT", help="the phone's endpoint, e.g. ipc:///tmp/x/phone.sock")
    parser.add_argument("--id", default="watch", help="DEALER routing id (default: watch)")
    parser.add_argument("--batches", type=int, default=1, help="exit 0 after N applied batches (default 1)")
    parser.add_argument("--timeout", type=float, default=10.0, help="wall seconds before exiting 1 (default 10)")
    parser.add_argument("--malformed", choices=sorted(MALFORMED), help="send this invalid message, await ERROR")
    parser.add_argument("--state", help="store the newest batch durably in this file (watch.json)")
    parser.add_argument("--request", action="store_true",
                        help="after N batches, send a REQUEST and exit 0 once its answer (a batch) is applied")
    args = parser.parse_args(argv)
    if args.request and args.malformed is not None:
        parser.error("--request and --malformed are separate runs")
    if args.batches < 0 or args.timeout <= 0:
        parser.error("--batches must be >= 0 and --timeout > 0")
    if not 1 <= len(args.id.encode("utf-8")) <= 255 or args.id.startswith("\0"):
        parser.error("--id must be 1 to 255 bytes and not start with a zero byte")
    return args


def main(argv):
    args = parse_args(argv)

    def stop(signum, _frame):
        raise Stop(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    watch = Watch(args)
    status = 1
    try:
        status = watch.run()
    except Stop as stopped:
        emit("watch.stopping", signal=str(stopped))
        status = 0
    finally:
        # The socket's LINGER is 0 as the doc says; on the way out the last ACK or ERROR gets up to
        # a second to leave (ctx.term returns as soon as it has).
        watch.close(1000)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
