// SPDX-License-Identifier: Apache-2.0

import Foundation

/// The type of an event field, as docs/protocol.md's event table writes it.
package enum EventFieldType: String, Sendable {
    /// `str`: a JSON string.
    case string = "str"
    /// `int`: a whole JSON number.
    case int
    /// `num` or `double`: any JSON number.
    case number = "num"
    /// `bool`: true or false.
    case bool
    /// `instant`: an ISO 8601 UTC instant (`2026-07-20T07:00:00Z`, milliseconds allowed).
    case instant
    /// `date`: a local calendar date, `YYYY-MM-DD`.
    case date
    /// `time`: a local time of day, `HH:MM`.
    case time
    /// `zone`: an IANA time zone identifier.
    case zone
    /// `hex`: 16 lowercase hex digits (an epoch or a digest).
    case hex
    /// `object`: a nested JSON object (cannot be matched by a scenario's `fields`).
    case object
}

/// One documented field of an event: its type, and whether it may be null (`?`).
package struct EventField: Sendable, Equatable {
    /// The field's JSON key.
    package var name: String
    /// Its type.
    package var type: EventFieldType
    /// Whether the field may be null.
    package var optional: Bool
}

/// The fields each event carries, read from the event table of docs/protocol.md ("Events"),
/// which is embedded here row for row (a test keeps the two equal): a scenario's expectation can
/// then be checked when the file is read, not found vacuous after the run.
///
/// Every event also has `event`, `time` (instant) and `source` (str), and a held-back one
/// `suppressed` (int). An event whose row describes some fields in prose (`soak.summary`'s "the
/// batch and fault counts") is open: other fields are not refused for it.
package enum EventFieldCatalog {
    /// The event table's rows, as in docs/protocol.md.
    package static let table = #"""
        | phone | `phone.started` | endpoint str (an ipc path made absolute), timeZone zone, timeZoneSource str (where timeZone comes from, highest first: `time-zone`, travel in this run; `os.json`, the device's zone as travel or a `--time-zone` left it before this start; `--time-zone`; `schedule`; `machine`), lastSeq int, pid int, platform str (`ios`, `android`), registration str, osState str (`new`: a new simulated OS; `stored`: the one in os.json), boundEndpoint str, security str, tzdata str (the tz database's version, `2026f`, or `unknown`) |
        | phone | `refresh.foreground` | reason str (`open`: a user launch, also at start; `time-zone`), timeZone zone, earliestBeginDate instant? |
        | phone | `notification.added`, `notification.pending` | id str, fireDate instant, text str (each bedtime notice a refresh adds; stdin `notifications`); `notification.added`: delivery str (what the user sees when it fires: `alert`; iOS `quiet` while the authorization is `provisional`, Notification Center only; Android `none` while the permission is revoked) |
        | phone | `notification.dropped` | id str, fireDate instant, text str, reason str (the 64-pending limit pushed it out; the OS would never show it) |
        | phone | `notification.hidden` | id str, fireDate instant, text str, reason str (Android: the notice was posted with the notification permission revoked; it is never shown and the app gets no error; docs/scheduler.md, "Permissions") |
        | phone | `notification.failed` | id str, fireDate instant, text str, domain str (`UNErrorDomain`), code int (1, `UNError.Code.notificationsNotAllowed`), error str (`notificationsNotAllowed`), reason str (iOS: the notification authorization is `denied` or `not-determined`, so `UNUserNotificationCenter.add` failed and nothing is pending; in place of `notification.added`; docs/scheduler.md, "Notification authorization") |
        | phone | `alarm.set` | tag str (`wake-up`), kind str (`alarm-clock`: `setAlarmClock()`), triggerAt instant (the next wake-up), replaced instant? (the trigger of the alarm it replaced) (Android with `--phone-alarm on`: the companion phone alarm for the next wake-up, set at each refresh that plans new dates, when it fires (for the next one) and on the exact alarm permission's grant broadcast; docs/scheduler.md, "Alarms") |
        | phone | `alarm.refused` | tag str, kind str, triggerAt instant, reason str (`SecurityException`: the exact alarm permission is missing, e.g. `SCHEDULE_EXACT_ALARM` on a new install on API 34+; said once per wake-up) |
        | phone | `alarm.lost` | tag str, kind str, triggerAt instant, reason str (the user revoked `SCHEDULE_EXACT_ALARM`: the OS deleted the alarm with no broadcast, the app cannot know; the next refresh tries again) |
        | phone | `alarm.cancelled` | tag str, kind str, triggerAt instant, reason str (the app cancelled its alarm: `--phone-alarm off` at a start while the OS still held one) |
        | phone | `schedule.changed`, `schedule.rejected` | path str; rejected: reason str, kept str |
        | phone | `timezone.changed` | from zone, to zone: each `time-zone` line, also one that names the zone in force (`from` equals `to`; the phone plans again all the same) |
        | watch | `timezone.changed` | from zone, to zone, timeZoneSource str (`time-zone`, `--time-zone`, `batch`, `system`), nextBedTap instant?: the zone the watch lives in changed and `--bed-at` was planned again, or a `time-zone` line named the zone in force (`from` equals `to`, its source now `time-zone`) |
        | phone | `batch.generated`, `batch.sent` | seq int, epoch hex, digest hex, count int, first instant?, last instant?, timeZone zone (`batch.sent`: each successful send, resends included; *traffic*) |
        | phone | `batch.unchanged` | seq int, epoch hex, digest hex, timeZone zone (the acknowledged batch whose dates an OS-launched background refresh made again: nothing is generated or sent, phone rule 7) |
        | phone | `ack.received` | seq int, epoch hex, digest hex, coverageEnd instant? |
        | phone | `ack.duplicate`, `ack.stale` | seq int, epoch hex, digest hex; duplicate: coverageEnd instant?; stale: newest int; *traffic* |
        | phone | `ack.mismatch` | seq int, epoch hex, digest hex (what the watch holds), expected hex (the phone's digest) |
        | phone | `epoch.changed` | from hex, to hex, reason str (a new numbering: the watch held a batch this phone did not issue, or the seq space ran out) |
        | phone | `up_to_date.sent` | seq int; *traffic* |
        | both | `send.failed` | type str, reason str (e.g. watch not connected); *limited* |
        | phone | `phone.status` | lastSeq int, acked bool (the watch acknowledged the batch of the schedule the user last set: false while that batch could not be written), notOnWatch str? (why the current schedule is not on the watch: the unsaved batch, the errno and reason, what the watch can hold, the failed writes; null otherwise), count int, coverageEnd instant?, timeZone zone, timeZoneSource str (as in `phone.started`), pendingNotifications int (not yet fired), earliestBeginDate instant?, nextBackgroundLaunch instant?, runs int, lastRunAt instant?, stalenessHours num? (hours since the last successful background run ended, ≥ 0, to two decimals, as dataAgeHours; a user's open does not reset it; null before the first one), dataAgeHours num? (hours since the last successful run of either kind, background or foreground, ended; null before the first; docs/metrics.md), platform str, crashed str?, rejectedMessages int, refusedPeers int (clients ZAP refused), sendFailures int, receivedMessages int (decoded messages from the paired watch, PINGs aside), receivedRequests int (its REQUESTs), behind object (count: OS launches handled more than thresholdSeconds, 600 virtual seconds, after their planned instant; maxLateSeconds: the largest such lateness, virtual seconds to one decimal; thresholdSeconds), batteryLevel num? (iOS: the battery's charge at the status instant, 0 to 1 to two decimals, as it drains and charges on the usage model; null when never set, which the OS takes as full, and on Android), budgets object? (iOS usage model: energySeconds, the energy budget's balance in running seconds to two decimals, and dataBytes, the data budget's in whole bytes, both below zero when overdrawn; null on Android and the legacy model), os object (the simulated OS: platform, pendingIdentifier, nextLaunch, running, lowPowerMode, backgroundRefresh, forceQuit, reboots, wallClockOffset (seconds, `clock-set`), …; iOS registrationMode, launchPhase, earliestBeginDate, notificationAuthorization; Android bucket, quotaRemaining (seconds), charging, runAttemptCount, periodCount) , why object (`os.why`'s fields at the instant of the status), processingWhy object? (iOS, once the app submitted a processing request: the same fields for it) |
        | phone | `clock.behind` | timer str (`osLaunch`), plannedAt instant? (the launch's planned instant; null in the summary said before `phone.stopping`), lateSeconds num? (virtual seconds it was handled after that, one decimal; null in the summary), count int (launches handled more than thresholdSeconds late so far), maxLateSeconds num (the largest of those latenesses), thresholdSeconds num (600): the phone's loop fell behind virtual time (a busy machine, fsync at a high `--clock-speed`); the launch still runs at its planned instant, on the state of that instant (the poll loop fires a due timer before any input read after it), unless an input was handled after that instant: then it runs at that input's instant, so no event is stamped before an input whose effect it carries. Said the first time, when the count doubles or the lateness is more than twice the largest said; the rest are counted, and the totals are said before `phone.stopping` |
        | phone | `refresh.deferred` | reason str (travel while the app is not running: the zone applies at its next launch) |
        | watch | `watch.started` | endpoint str (an ipc path made absolute), id str, lastSeq int, pid int, timeZone zone, timeZoneSource str, tzdata str (the version of the watch's tz database), alarms int (the alarms set and not yet rung that the state file held, re-armed) |
        | watch | `link.up`, `link.down` | endpoint str |
        | watch | `link.handshake_failed`, `link.handshake_timeout` | endpoint str, code int (handshake_failed only), reason str (handshake_failed *limited*; the timeout 5 s after start or a lost link, then every 30 s until a handshake) |
        | phone | `peer.refused` | mechanism str, address str, reason str (ZAP said no); *limited* |
        | both | `state.recovered` | path str, reason str (`missing` when the file was not there), movedTo str?, from str (`previous copy` / `clean start`), previousReason str? and previousMovedTo str? (the previous copy `<path>.prev`, when it was bad too and moved aside); stderr says the same |
        | watch | `hello.sent` | lastSeq int, epoch hex? |
        | watch | `batch.applied` | seq int, epoch hex, count int, coverageEnd instant?, timeZone zone, zoneKnown bool, epochChanged bool |
        | both | `clock.skew` | message str (`BATCH` on the watch, `HELLO` on the phone), generatedAt instant (BATCH), sentAt instant (HELLO), skewHours num (the message's instant − the receiver's virtual now, hours to one decimal), reason str: *limited*; a BATCH generated more than 1 h after the watch's now (the clocks disagree: another `--clock-start`, `--clock-speed` or `--clock-anchor`), or more than 8 days before it (past its horizon); a HELLO whose `sentAt` is more than 1 h after the phone's now, or before it by more than 1 h or 2 wall seconds at its `--clock-speed`, whichever is more; the message is still handled as usual |
        | watch | `ack.sent` | seq int, epoch hex, digest hex, coverageEnd instant?; *traffic* |
        | watch | `batch.duplicate`, `sync.up_to_date` | seq int; *traffic* |
        | watch | `batch.stale` | seq int, applied int (the seq the watch holds); *traffic* |
        | watch | `batch.conflict` | seq int, held hex, received hex (the two digests) |
        | watch | `bed.wake_time` | wakeTime instant, localDate date, localTime time, timeZone zone (the wake-up's, from the batch), utcOffset int (seconds east of UTC), zoneKnown bool, remaining int (this wake-up included), tapLocalDate date, tapLocalTime time, tapTimeZone zone (the tap, in the zone the watch lives in) |
        | watch | `fallback.manual_entry` | reason str, tapLocalDate date, tapLocalTime time, tapTimeZone zone |
        | watch | `manual.wake_time` | wakeTime instant, localDate date, localTime time, timeZone zone (the typed time's), tapLocalDate date, tapLocalTime time, tapTimeZone zone (when it was typed) |
        | watch | `request.sent` | id int, nightsLeft int, coverageEnd instant? (a REQUEST left for the phone, `--request-dates`) |
        | watch | `coverage.low` | nightsLeft int (cached wake-ups strictly after the check), coverageEnd instant? (the last cached wake-up; null for an empty batch) |
        | watch | `request.held` | nightsLeft int, reason str (`watch app not active`: a REQUEST was due while the watch app was not active, and waits for the user's next touch or raised wrist; said once per wait) |
        | watch | `wrist` | up bool, appActive bool (after it: up, or within `--active-seconds` of the last touch), requestHeld bool (a REQUEST still waits for the app to be active; false after a raised wrist sent it) (stdin `wrist up` or `wrist down`: the user raises the wrist to look at the watch, or lowers it; said before the REQUEST the raised wrist sends) |
        | watch | `alarm.set` | alarmTime instant, localDate date, localTime time, timeZone zone (the alarm's instant in the zone the watch lives in; at the tap or typed time that set it) |
        | watch | `alarm.fired` | alarmTime instant, localDate date, localTime time, timeZone zone, snoozes int (0 for the first ring; stamped at the alarm's instant or the snooze's end), late num (seconds after its instant: 0, except at a start after it came due while no watch process ran, stamped then) |
        | watch | `alarm.snoozed` | alarmTime instant, localDate date, localTime time, timeZone zone, until instant (stdin `snooze`) |
        | watch | `alarm.stopped` | alarmTime instant, localDate date, localTime time, timeZone zone, rangFor num (seconds since the last ring began; 0 while snoozed), snoozes int, by str (`user`: stdin `stop`; `simulated user`: `--stop-alarm-after`; `replaced`: a later alarm came due and rings in its place) |
        | watch | `complication.reloaded` | digest hex (the batch the timeline is built from), entries int (its entries, the last "no cached date"), nextAlarm instant? (what the face shows now; null: no cached date), reloads int (in the last 24 h of virtual time, this one included), budget int (`--complication-budget`) |
        | watch | `complication.budget_exhausted` | digest hex (the dates waiting), reloads int, budget int, retryAt instant (when the next reload is allowed; the face keeps its old timeline until then) |
        | watch | `complication.timeline` | digest hex?, entries int, showing instant? (the next alarm the face shows now), reloads int, budget int, waiting bool (newer dates wait for the budget) (stdin `complication`) |
        | watch | `complication.entry` | start instant (the face shows this entry from then on), wake instant? (null: "no cached date"), localDate date?, localTime time?, text str, timeZone zone (the zone the watch lives in) |
        | watch | `cache.status` | count int, remaining int, coverageEnd instant?, seq int, timeZone zone?, staleIgnored int, nightsLeft int (the same count as remaining), coverageLow bool (a batch is held and nightsLeft is at or below a `--warn-nights` that is not 0), requestsSent int (REQUESTs since start), appActive bool (the watch app is active: wrist up, or within `--active-seconds` of the user's last touch), requestHeld bool (a REQUEST waits for the app to be active), rejectedMessages int, receivedMessages int (decoded messages from the phone, PINGs aside), sendFailures int, tapTimeZone zone (the zone the watch lives in, which its bed taps use; `timeZone` is the batch's), tapTimeZoneSource str (`time-zone`, `--time-zone`, `batch`, `system`), alarmSet instant? (the next alarm set and not yet rung), alarmRinging bool |
        | both | `message.received` | type str; *traffic* |
        | both | `message.rejected` | reason str; *limited* |
        | both | `peer.error` | reason str; *limited* |
        | both | `peer.online`, `peer.offline` | phone: id str; watch: endpoint str; offline: silentFor num (seconds) |
        | phone | `peer.replaced` | id str (the paired routing id), instance hex (the new process's HELLO `instance`), previousInstance hex, previousSilentFor num? (wall seconds since the routing id was last heard, one decimal), secondWatch bool (the new instance had been replaced before and speaks again: two watch processes share the routing id and take it from each other; false for the first change, which may be a restart), reason str (what it means, by secondWatch): *limited* |
        | both | `input.rejected` | input str, reason str (a bad stdin line) |
        | both | `persist.failed` | path str (the phone's phone.json or phone-app.json, the watch's watch.json), reason str, and for the phone's state files only: errno str? (`ENOSPC`, `EIO`, …; null when no system call failed), unsavedSeq int? (phone.json: the batch the write carried, which is not on disk and so not on the watch; null when the write carried no new batch), retryIn num? (wall seconds until the phone makes that batch again and writes it: 1, doubling to 60; once a write succeeds the batch is sent, without the user) (phone.json, watch.json: nothing is sent on the strength of it; a background run's run records are kept; the phone's os.json: the simulated OS goes on in memory and is written again at its next change; a run-record file of `--metrics-dir`: that record is lost, the phone goes on, and a file that is not a run-record file is never overwritten) |
        | both | `phone.stopping`, `watch.stopping` | signal int (SIGINT, SIGTERM or SIGHUP) or reason str (`quit`, `end of input`: Ctrl-D on a terminal, `output closed`: stdout's reader is gone; this last one reaches no reader; `virtual time reached the end of 2199`: the clock flags ran the virtual clock to 2199-12-31T23:59:59Z, the last instant they allow, and the process exits 64); always the process's last line: held-back repeats (`suppressed`) come before it |
        | watch | `link.reconnect`, `link.reconnect_failed` | endpoint str; failed: reason str (the link stayed down, reconnecting by hand) |
        | both | `error.sent` | reason str; *limited* |
        | phone | `handler.registered` | identifier str, accepted bool, phase str (`didFinishLaunching` / `after launch`) |
        | phone | `app.crashed` | message str (late-crash: the launch-handler error) |
        | phone | `handler.entered` | identifier str, budget num? (seconds), simulated bool, runAttemptCount int |
        | phone | `renew.submitted` | identifier str, earliestBeginDate instant |
        | phone | `submit.failed` | reason str; when the OS refused: error str (`unavailable`, `tooManyPendingTaskRequests`, `notPermitted`), code int |
        | phone | `weather.fetched` | reason str, provider str (`offline`, `open-meteo`), hours int (forecast hours), cost num (seconds) |
        | phone | `weather.skipped` | reason str |
        | phone | `weather.failed` | reason str, network bool |
        | phone | `sunlight.skipped` | reason str |
        | phone | `handler.expired` | step str, duration num (seconds into the run), budget num? (a background run's, or the OS's budget for a watch's REQUEST) |
        | phone | `handler.completed` | success bool, outcome str (`success`, `failure`, `retry`), duration num (the end of a run the app got without the user: the refresh task's, the processing task's or a server push's) |
        | phone | `run.record` | at instant, scheduledAt instant? (a background run's scheduled time: the earliestBeginDate of the request it answered; null for a foreground run or a watch's REQUEST), success bool, lowPower bool, bucket str?, kind str (`background`, `foreground`, `watch-request`, `processing`: iOS's BGProcessingTask, `--processing-task on`, `push`: a server push), duration num (stdin `history`) |
        | phone | `request.received` | id int, nightsLeft int, coverageEnd instant? (a valid REQUEST from the paired watch); *traffic* |
        | phone | `request.served` | id int, success bool, duration num (seconds), seq int? (the batch the run published, null when none) |
        | phone | `request.refused` | id int, reason str (the app did not run the job for it; an ERROR tells the watch); *limited* |
        | phone | `push.received` | priority str (`normal` or `high`), budget num? (seconds the OS gives the run; null: no limit) (the app got a server push, stdin `push`, and runs the job for it; docs/scheduler.md "A server push") |
        | phone | `push.refused` | priority str, reason str (the OS did not hand the push to the app: force-quit or force-stopped, Background App Refresh off, Low Power Mode, throttled; or the app crashed at launch) |
        | phone | `push.deferred` | priority str, until instant (Android: a normal-priority push that Doze holds until its next maintenance window, when `push.received` follows) |
        | phone | `location.changed` | latitude num, longitude num (degrees), moved num (metres) |
        | os | `os.launch` | identifier str, budget num?, simulated bool; iOS earliestBeginDate instant?, plannedLaunch instant?, and for a processing task kind str (`processing`); Android runAttemptCount int, bucket str, charging bool, due instant (the OS launches the app for its background work) |
        | os | `os.launch.dropped` | identifier str, reason str (iOS: launched, but no handler was registered in time; or the app crashed while launching, which spends the request too) |
        | os | `os.opportunity.missed` | identifier str, reason str (iOS: a launch opportunity the system did not take) |
        | os | `os.request.submitted` | identifier str, earliestBeginDate instant?, plannedLaunch instant?; an iOS processing request: kind str (`processing`), requiresExternalPower bool, requiresNetworkConnectivity bool (plannedLaunch null while its conditions do not hold) |
        | os | `os.request.replaced` | identifier str, previousEarliestBeginDate instant? (a new request for the same identifier) |
        | os | `os.request.cancelled` | identifier str, earliestBeginDate instant? (iOS: the app cancelled its pending processing request: a build without `--processing-task on` cancels the one an earlier build left) |
        | os | `os.request.rejected` | identifier str, code int, error str, reason str |
        | os | `os.register` | identifier str, inTime bool |
        | os | `os.register.refused` | identifier str, reason str |
        | os | `os.app.launched` | byUser bool |
        | os | `os.app.killed` | identifier str, reason str; Android stopReason int, stopReasonName str (13 `STOP_REASON_USER`), duration num, runAttemptCount int, nextRunAt instant |
        | os | `os.app.crashed` | message str |
        | os | `os.app.updated` | registration str (the update applies at the app's next launch) |
        | os | `os.task.completed` | identifier str, success bool, duration num |
        | os | `os.task.expired` | identifier str; a processing task expired because the user started using the device (stdin `screen on`): reason str |
        | os | `os.complete.ignored`, `os.simulate.failed` | identifier str, reason str; `os.simulate.failed` on Android: nextRunAt instant |
        | os | `os.conditions.changed` | backgroundRefresh bool, lowPowerMode bool, forceQuit bool; Android charging bool (a change no stdin input names: a user's open or a reboot lifting force quit; an input's change is its own event below, one event per change) |
        | os | `os.rebooted` | pendingIdentifier str?; iOS forceQuitCleared bool, Android forceStopped bool |
        | os | `os.work.enqueued` | identifier str, repeatInterval num, flex num, initialDelay num (seconds, to the millisecond), nextRunAt instant |
        | os | `os.work.kept` | identifier str |
        | os | `os.work.rescheduled` | reason str |
        | os | `os.work.completed` | identifier str, result str, duration num, runAttemptCount int, backoff num (seconds, after a retry), nextRunAt instant |
        | os | `os.work.stopped` | identifier str, reason str, stopReason int and stopReasonName str (`WorkInfo.getStopReason()`: 10 `STOP_REASON_QUOTA`, 13 `STOP_REASON_USER`, 0 `STOP_REASON_UNDEFINED` at a reboot, 5 to 9 `STOP_REASON_CONSTRAINT_*` when a constraint is lost (reason `constraint`), the code stdin `stop REASON` names (reason `stop`)), duration num, runAttemptCount int, nextRunAt instant |
        | os | `os.low_power`, `os.background_refresh`, `os.charging` | on bool (stdin `low-power`, `background-refresh`, `charging`) |
        | os | `os.network`, `os.battery_low`, `os.storage_low` | on bool (Android: stdin `network`, `battery-low`, `storage-low`, the conditions `--constraints` waits for) |
        | os | `os.battery` | level num (the charge, 0 to 1) (iOS: stdin `battery LEVEL`; under the usage model it drains or charges from there, docs/scheduler.md, "Battery over the day") |
        | os | `os.notifications` | authorization str (`authorized`, `denied`, `provisional`, `not-determined`), delivery str (what the user sees of a notice: `alert`, `quiet` (Notification Center only), `none`) (iOS: stdin `notifications STATE`, `--notifications`) |
        | os | `os.clock_set` | delta num (seconds the user moved the wall clock by; negative: back), offset num (the wall clock − true time, seconds), wallClock instant (what the wall clock now reads) (stdin `clock-set ±DURATION`) |
        | os | `os.time_changed` | delta num, pendingIdentifier str?; iOS notification str (`UIApplication.significantTimeChangeNotification`), earliestBeginDate instant?, plannedLaunch instant? (unchanged: the request keeps its true instant); Android broadcast str (`android.intent.action.TIME_SET`), nextRunAt instant? (WorkManager's next run, replanned on the wall clock) (docs/scheduler.md, "The user sets the clock") |
        | os | `os.permission` | permission str (`notifications`, `exact-alarm`), granted bool, applied bool? (exact-alarm: false when the app declares `USE_EXACT_ALARM`, which has no toggle), broadcast str? (exact-alarm: `ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED` when granted, null when revoked: no broadcast) (Android: stdin `permission notifications\|exact-alarm grant\|revoke`) |
        | os | `os.alarm.fired` | tag str, kind str (`alarm-clock`, `exact`, `exact-while-idle`, `while-idle`, `inexact`), triggerAt instant, late num (seconds after triggerAt: Doze's deferral or the while-idle limit; 0 for an alarm clock), doze str (the deep Doze phase as it fires) (Android: at the alarm's own instant; docs/scheduler.md, "Alarms") |
        | os | `os.test_driver` | control str (`initial-delay-met`, `period-delay-met`, `constraints-met`, or `stop` armed for the next run), identifier str?, applied bool, reason str? (why it did not apply, or what the armed stop does), nextRunAt instant? (Android: TestDriver-style stdin controls; docs/scheduler.md, "Constraints and test controls") |
        | os | `os.force_quit`, `os.reboot` | none (stdin `force-quit`, `reboot`) |
        | os | `os.standby_bucket` | bucket str (stdin `bucket`; Android's App Standby bucket, the one event for the move) |
        | os | `os.push` | priority str, woken bool, deliverAt instant? (when the app gets it: the arrival, or Doze's next maintenance window; null when it does not), budget num? (seconds; null: no limit), reason str? (why the app does not get it) (a server push reached the device) |
        | os | `os.watch_message` | channel str (`WatchConnectivity` on iOS, `MessageClient` on Android), woken bool, appRunning bool, budget num? (seconds; null: no limit), reason str? (why the app was not woken) (a REQUEST reached the phone) |
        | os | `os.registration` | registration str, appliesAt str (stdin `registration`) |
        | os | `os.doze` | phase str (deep Doze: `active`, `inactive`, `sensing`, `idle`, `maintenance`), until instant? (when the phase ends; null: while the inputs stay), light str (light Doze: `active`, `inactive`, `idle`, `maintenance`), lightUntil instant?, reason str? (`alarm-clock`: Doze ends `dozeExitLead` before a `setAlarmClock()` alarm, until it fires) (Android: stdin `screen`, `motion`, `idle`, and each phase change Doze makes by itself, at its instant; docs/scheduler.md, "Doze") |
        | os | `os.screen` | on bool (the user uses the device), idleAt instant? (when the device counts as idle, 600 s after the screen went off; null while in use) (iOS: stdin `screen on\|off`; docs/scheduler.md, "Processing tasks") |
        | os | `os.why` | identifier str?, reason str (the first reason's code), reasonCodes str (the reasons' codes, each once, comma-separated), summary str, until instant? (when the first reason lifts), launchedAt instant? (the launch that did not enter the handler), nextLaunch instant?, reasons object (one entry per condition: reason str (its code), state str, until instant?, and for `handler` launchedAt instant?) (why the pending refresh has not run: whenever the answer changes, and on stdin `why`; docs/scheduler.md, "Why hasn't it run?") |
        | soak | `soak.summary` | result str (passed, failed, interrupted), message str?, tzdata str (the tz database's version; in both modes), seed str, steps int, stepsRun int, stepsByKind object (int per kind of step), the batch and fault counts int, signal int? (`sleeptap-soak --json`; `time` is wall time); with `mode` "exhaustion" (`sleeptap-soak exhaustion --json`): result str (passed, failed, interrupted), message str?, seed str, scenarios int, scenariosRun int, nightsPerScenario int, nights int, cached int, manualEntries int, foreseeable int, noBatchYet int, coverageLow int, batchesGenerated int, batchesApplied int, backgroundRuns int, alarmsFired int (first rings at an answered wake-up, docs/scenarios.md invariant 5), alarmsLostWithRestart int (answered wake-ups a watch start did not restore from its state file: a `fresh` start; 0 for restarts that keep it), seconds double, nightsPerSecond int, processes int, processNights int, racedNights int (process nights that differed from the twin only by a batch's wall-clock lag, docs/scenarios.md invariant 3), rssKiB object (phoneStart, phoneEnd, watchStart, watchEnd int?, largestEnd int), behind object (per process run, keyed by its timeline's index: an object with count int, the phone's OS launches handled more than 600 virtual seconds late, and maxLateSeconds num, the largest lateness; from its `clock.behind`), repro str?, signal int? |
        """#

    /// The documented fields of each event, and whether the row leaves some unnamed (open).
    package static let events: [EventName: (fields: [String: EventField], open: Bool)] = parse(table)

    /// The `source` each event's lines can carry, from the table's side column (`both`: phone
    /// and watch; the `os.*` names: os, whichever process writes them, `EventName.source(in:)`).
    package static let sources: [EventName: Set<EventSource>] = {
        var result: [EventName: Set<EventSource>] = [:]
        for row in rows(table) {
            let processes: [EventSource] =
                row.side == "both" ? [.phone, .watch] : EventSource(rawValue: row.side).map { [$0] } ?? []
            for name in row.names.compactMap(EventName.init(rawValue:)) {
                result[name, default: []].formUnion(processes.map { name.source(in: $0) })
            }
        }
        return result
    }()

    /// The fields every event line has.
    package static let common: [String: EventField] = [
        "event": EventField(name: "event", type: .string, optional: false),
        "time": EventField(name: "time", type: .instant, optional: false),
        "source": EventField(name: "source", type: .string, optional: false),
        "suppressed": EventField(name: "suppressed", type: .int, optional: false),
    ]

    /// Parses event table rows: `| side | `name`, `name` | field type, field type? (note); ... |`.
    /// - Returns: the fields per event name the catalogue knows (rows of other names are skipped).
    package static func parse(_ text: String) -> [EventName: (fields: [String: EventField], open: Bool)] {
        var result: [EventName: (fields: [String: EventField], open: Bool)] = [:]
        for (_, names, fieldText) in rows(text) {
            var fields: [String: EventField] = [:]
            var open = false
            for item in topLevelItems(withoutNotes(fieldText)) {
                var words = item.split(separator: " ").map(String.init)
                // `phone: id str`, `iOS forceQuitCleared bool`: a qualifier before the field.
                while let first = words.first, first.hasSuffix(":") || first == "iOS" || first == "Android" {
                    words.removeFirst()
                }
                let typeName = words.count == 2 ? words[1] : ""
                let optional = typeName.hasSuffix("?")
                let bare = optional ? String(typeName.dropLast()) : typeName
                guard let type = bare == "double" ? .number : EventFieldType(rawValue: bare) else {
                    open = true
                    continue
                }
                fields[words[0]] = EventField(name: words[0], type: type, optional: optional)
            }
            for name in names {
                guard let event = EventName(rawValue: name) else { continue }
                result[event] = (fields, open)
            }
        }
        return result
    }

    /// The rows of an event table: the side column (`phone`, `watch`, `both`, `os`, `soak`), the
    /// names in backticks of the event column, and the text of the fields column.
    private static func rows(_ text: String) -> [(side: String, names: [String], fields: String)] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| ") else { return nil }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4 else { return nil }
            let names = cells[2].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            return (cells[1], names, cells[3...].dropLast().joined(separator: "|"))
        }
    }

    /// The text with every parenthesised note removed (parentheses inside backticks are text).
    private static func withoutNotes(_ text: String) -> String {
        var out = ""
        var depth = 0
        var quoted = false
        for character in text {
            if character == "`" { quoted.toggle() }
            if !quoted && character == "(" { depth += 1 }
            if depth == 0 { out.append(character) }
            if !quoted && character == ")" { depth = max(0, depth - 1) }
        }
        return out
    }

    /// The items of a field list, split at commas and semicolons outside backticks.
    private static func topLevelItems(_ text: String) -> [String] {
        var items: [String] = []
        var current = ""
        var quoted = false
        for character in text {
            if character == "`" { quoted.toggle() }
            if !quoted && (character == "," || character == ";") {
                items.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        items.append(current)
        return items.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Why `value` (a JSON value as `JSONSerialization` gives it) cannot be field `key` of
    /// `event`, or nil when it can.
    /// - Returns: a reason naming the field, its documented type and the event's fields.
    package static func problem(event: EventName, key: String, value: Any) -> String? {
        guard let entry = events[event] else { return nil }
        guard let field = entry.fields[key] ?? common[key] else {
            if entry.open { return nil }
            let known = entry.fields.keys.sorted().joined(separator: ", ")
            return "\(event.rawValue) has no field \(key) (its fields: \(known.isEmpty ? "none" : known))"
        }
        let expected = "\(event.rawValue).\(key) is \(field.type.rawValue)\(field.optional ? " or null" : "")"
        if value is NSNull { return field.optional ? nil : "\(event.rawValue).\(key) is never null" }
        if let number = value as? NSNumber, JSONNumber(number).isBool {
            return field.type == .bool ? nil : "\(expected), not a boolean"
        }
        if let number = value as? NSNumber {
            switch field.type {
            case .number: return nil
            case .int:
                // Every count and sequence number the tools write is an exact JSON integer
                // (|n| ≤ 2^53 − 1, RFC 7493 §2.2): a larger one matches no line.
                let double = number.doubleValue
                guard double.rounded() == double else { return "\(expected), not a fraction" }
                return abs(double) <= 9_007_199_254_740_991 ? nil : "\(expected) of at most 2^53 - 1, not beyond it"
            default: return "\(expected), not a number"
            }
        }
        guard let text = value as? String else { return "\(expected)" }
        switch field.type {
        case .string: return nil
        case .instant:
            return ISO8601.date(text) != nil ? nil : "\(expected): an ISO 8601 instant such as 2026-07-20T07:00:00Z"
        case .date: return isLocal(text, "dddd-dd-dd") ? nil : "\(expected): a local date YYYY-MM-DD"
        case .time: return isLocal(text, "dd:dd") ? nil : "\(expected): a local time HH:MM"
        case .zone: return TimeZone(identifier: text) != nil ? nil : "\(expected): an IANA zone such as Europe/Berlin"
        case .hex:
            return text.utf8.count == 16 && text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
                ? nil : "\(expected): 16 lowercase hex digits"
        case .object: return "\(expected), which a scenario cannot match"
        default: return "\(expected), not a string"
        }
    }

    /// Whether `text` has exactly the shape `pattern` (`d` a digit, anything else itself).
    private static func isLocal(_ text: String, _ pattern: String) -> Bool {
        let characters = Array(text.utf8)
        let shape = Array(pattern.utf8)
        guard characters.count == shape.count else { return false }
        return zip(characters, shape).allSatisfy { character, expected in
            expected == UInt8(ascii: "d") ? (48...57).contains(character) : character == expected
        }
    }
}
