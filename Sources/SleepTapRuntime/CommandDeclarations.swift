// SPDX-License-Identifier: Apache-2.0

package import SleepTapCommandLine

/// The options of `phone`, `watch` and their `keygen`, declared once: `--help` is generated from
/// them and the parsers accept only these names.
extension CommandLineParser {
    /// The three options of the virtual clock, the same for phone and watch.
    static func clockOptions(sameAsPhone: Bool) -> [OptionSpec] {
        let same = sameAsPhone ? " (as for phone: give both the same values)" : ""
        return [
            OptionSpec(
                "--clock-start", value: "ISO8601", example: "2025-03-06T17:00:00Z",
                help: "virtual time at the anchor, e.g. 2025-03-06T17:00:00Z" + same),
            OptionSpec(
                "--clock-speed", value: "N", synopsis: .withPrevious, example: "3600",
                help: "virtual seconds per wall second, up to 10000000 (default: 1)"),
            OptionSpec(
                "--clock-anchor", value: "UNIX_SECONDS", synopsis: .withPrevious, example: "1767225600",
                needs: ["--clock-start", "2025-03-06T17:00:00Z"],
                help: "wall UNIX time at which virtual time = --clock-start (default: now; needs --clock-start)"),
        ]
    }

    /// `phone`'s options and texts.
    package static let phoneCommand = CommandSpec(
        program: "phone",
        summary: """
            The phone half of SleepTap. Binds a ZeroMQ ROUTER on ENDPOINT, runs a foreground refresh
            (as when the user opens the app): generates the next batch of wake-up dates, sends it to
            the watch, resends until acknowledged and answers every HELLO with the newest batch.
            Events are JSON lines on stdout; diagnostics go to stderr.
            """,
        sections: [
            .init(nil, phoneLinkOptions),
            .init(
                """
                The simulated OS (docs/scheduler.md) and the consolidated refresh job. The OS keeps its
                state in DIR/os.json across restarts (pending requests, its random draws, settings); the
                defaults below are for a new one. A flag given at a restart overrides the stored value;
                a flag not given keeps it.
                """, phoneOSOptions),
            .init(nil, clockOptions(sameAsPhone: false) + [.helpOption(), .versionOption()]),
        ],
        footer: phoneFooter)

    static let phoneLinkOptions: [OptionSpec] = [
        OptionSpec(
            "--endpoint", value: "ENDPOINT", synopsis: .required, example: "ipc:///tmp/sleeptap/phone.sock",
            help: """
                ipc://PATH or tcp://HOST:PORT (PORT may be *: phone.started says which port was bound); a
                relative PATH is resolved against the working directory at start, and must then be at
                most 107 bytes
                """),
        OptionSpec(
            "--state-dir", value: "DIR", synopsis: .required, example: "/tmp/sleeptap/phone",
            help: """
                where phone.json (outbox, last seq), phone-app.json (notices, run history, forecast) and
                os.json (the simulated OS, which outlives the app) are kept; created if missing
                """),
        OptionSpec(
            "--schedule", value: "FILE", example: "schedule.json",
            help: "weekly schedule, JSON (docs/schedule-format.md); default 07:00 daily"),
        OptionSpec(
            "--time-zone", value: "TZ", example: "UTC",
            help: "IANA zone, e.g. America/New_York; default: the schedule's, else system"),
        OptionSpec(
            "--tzdata", value: "DIR", example: "/usr/share/zoneinfo",
            help: """
                the IANA tz database (TZif files, as zic writes them) whose rules every wake-up uses;
                default: $TZDIR, else /usr/share/zoneinfo (a TZ, or TZ=:Zone, naming a zone it lacks is an
                error)
                """),
        OptionSpec(
            "--keys", value: "DIR", example: "keys",
            help: """
                CURVE: DIR holds this phone's phone.key_secret (from `phone keygen --dir DIR`) and the
                paired watch's public certificate watch.key; only that watch is admitted (ZAP); DIR and
                its files must not be writable by group or others
                """),
        OptionSpec(
            "--insecure", synopsis: .orPrevious,
            help: """
                allow plaintext tcp, and an ipc socket in a directory other users can reach (by default
                tcp needs --keys, and the ipc directory must be yours and mode 0700; a missing one is
                made so)
                """),
        OptionSpec(
            "--watch-id", value: "ID", example: "watch-2",
            help: "routing id of the watch to deliver to (default: watch)"),
        OptionSpec(
            "--horizon-days", value: "N", example: "14", help: "local days of wake-ups per batch, 1-64 (default: 7)"),
        OptionSpec(
            "--device-seed", value: "N", example: "42",
            help: """
                seed of the daily notice-text rotation (default: random at first start, then kept in the
                state dir)
                """),
    ]

    static let android = ["--platform", "android"]

    static let phoneOSOptions: [OptionSpec] = [
        OptionSpec(
            "--platform", value: "ios|android", example: "android",
            help: "ios (BGTaskScheduler, default) or android (WorkManager); must match the stored OS"),
        OptionSpec(
            "--registration", value: "MODE", example: "late-silent",
            help: """
                early: handler registered in didFinishLaunching (default); late-silent: registered after
                launch, accepted, never entered (SwiftUI .backgroundTask on iOS 26.6); late-crash: the app
                dies
                """),
        OptionSpec(
            "--budget", value: "SECS", example: "60",
            help: "iOS app-refresh budget in virtual seconds (default: 30)"),
        OptionSpec(
            "--opportunity-model", value: "legacy|usage", example: "legacy",
            help: """
                iOS: how the OS draws app-refresh launches: usage (default for a new OS) launches before
                the times of day the user opens the app, rarer as days pass without an open, at least
                30 min apart, within energy and data budgets; legacy an exponential wait after
                earliestBeginDate; kept with the OS; refused on Android
                """),
        OptionSpec(
            "--background-budgets", value: "LIST", example: "energy=120,data=500000",
            help: """
                iOS usage model: the energy (running seconds) and data (bytes) budgets per 24 h of the
                app's refresh runs, and the refill a full bucket holds (window, seconds): defaults
                energy=300,data=2000000,window=21600; a key left out keeps its value; kept with the OS
                """),
        OptionSpec(
            "--battery-rates", value: "LIST", example: "drain=0.05,charge=0.4",
            help: """
                iOS usage model: the charge the battery loses per hour unplugged and gains per hour on the
                charger, as fractions (defaults drain=0.03,charge=0.5), from the level stdin battery sets;
                kept with the OS
                """),
        OptionSpec("--low-power", help: "Low Power Mode on (no background runs)"),
        OptionSpec("--refresh-off", help: "Background App Refresh switched off (submit fails: unavailable)"),
        OptionSpec(
            "--charging", needs: android,
            help: """
                Android: charging, standby quotas lifted (restricted: only while the device is idle and
                the battery not low)
                """),
        OptionSpec(
            "--bucket", value: "NAME", example: "rare", needs: android,
            help: "Android standby bucket: active, working_set, frequent, rare, restricted"),
        OptionSpec(
            "--interval", value: "SECS", example: "3600", needs: android,
            help: "Android periodic interval (raised to the 900 s minimum; default 21600)"),
        OptionSpec(
            "--android-api", value: "N", example: "34", needs: android,
            help: """
                Android API level 21-36; selects the job quota table: below 33 the pre-Android 13 one
                (default), 33-35 Android 13-15 (adds a 4 h per 24 h execution cap), 36 Android 16
                """),
        OptionSpec(
            "--android16-quotas", value: "on|off", example: "off", needs: android + ["--android-api", "36"],
            help: """
                on (default) or off: Android 16's flagged quota values (active 20 min per 1 h, working_set
                10 min per 4 h, frequent 10 min per 12 h); off keeps the Android 13-15 table; only with
                --android-api 36
                """),
        OptionSpec(
            "--constraints", value: "LIST", example: "network,charging", needs: android,
            help: """
                Android: the refresh work request's Constraints, comma-separated: network, charging,
                device-idle, battery-not-low, storage-not-low (or none, the default); the work waits while
                one is unmet and `why` names it (PENDING_JOB_REASON_CONSTRAINT_*)
                """),
        OptionSpec(
            "--notifications", value: "STATE", example: "provisional",
            help: """
                iOS: the app's notification authorization: authorized (default), denied, provisional
                (quiet: Notification Center only) or not-determined; denied and not-determined make every
                notice fail (notification.failed, UNErrorDomain 1)
                """),
        OptionSpec(
            "--phone-alarm", value: "on|off", example: "on", needs: android,
            help: """
                Android: on sets a companion phone alarm, setAlarmClock() for the next wake-up (alarm.set,
                os.alarm.fired at its instant; Doze ends 3 min before it); off (default) sets none and
                cancels one left set (the watch rings either way); the app's setting, not stored; refused
                on iOS (this model has no iOS alarm API)
                """),
        OptionSpec(
            "--processing-task", value: "on|off", example: "on",
            help: """
                iOS: on also registers a BGProcessingTask and submits a nightly BGProcessingTaskRequest on
                the charger (requiresExternalPower), which runs the same job while the device is idle
                (stdin screen, charging, network); off (default) submits none; the app's setting, not
                stored; refused on Android
                """),
        OptionSpec(
            "--exact-alarm-permission", value: "P", example: "use", needs: android,
            help: """
                Android: the exact alarm permission the app declares: schedule (SCHEDULE_EXACT_ALARM,
                default; denied on a new install on API 34+: alarm.refused until `permission exact-alarm
                grant`) or use (USE_EXACT_ALARM, an alarm-clock app's, granted at install)
                """),
        OptionSpec(
            "--os-seed", value: "N", example: "7",
            help: """
                seed of a new OS's launch-opportunity model (default: 1, the same for every new phone, so
                that a run is reproducible; give each phone its own when several stand for a fleet); a
                stored OS goes on with its own draws
                """),
        OptionSpec(
            "--step-costs", value: "LIST", example: "renew=0.1,notices=0.5,dates=2",
            help: """
                virtual seconds per job step, e.g. renew=0.1,notices=0.5,dates=2; and weather-bytes=N, the
                bytes a background weather fetch draws from the iOS usage model's data budget (default 8000)
                """),
        OptionSpec(
            "--weather", value: "W", example: "open-meteo",
            help: "offline (default, deterministic), open-meteo, or a base URL"),
        OptionSpec(
            "--weather-cost", value: "SECS", example: "1",
            help: "virtual seconds an offline fetch costs (default: 0.3)"),
        OptionSpec(
            "--location", value: "LAT,LON", example: "40.71,-74.01",
            help: "the phone's location in degrees (default: 52.52,13.405)"),
        OptionSpec(
            "--metrics-dir", value: "DIR", example: "/tmp/sleeptap",
            help: """
                append run records (docs/metrics.md) to DIR/metrics/bg_runs/<device>-<YYYY-MM-DD>.json,
                one file per UTC day; device = phone- and the device seed in hex
                """),
        OptionSpec(
            "--app-version", value: "V", example: "1.4.2",
            help: """
                the app build's version written in each run record (appVersion; 1 to 64 printable ASCII
                characters; default: none)
                """),
        OptionSpec(
            "--os-model", value: "FILE", example: "model.json",
            help: """
                iOS: draw each refresh request's wait from eligibility to launch from a model
                sleeptap-calibrate wrote (its most specific iOS group for --app-version with 20 or more
                answered requests) in place of the built-in draws; kept in os.json (docs/calibration.md)
                """),
    ]

    static let phoneFooter = """
        stdin commands, one per line:
          open            foreground refresh: re-read the schedule file, replace the bedtime
                          notices, generate and send a new batch
          time-zone TZ    travel: the phone's zone becomes TZ (IANA); wall-clock wake times
                          are kept (07:00 stays 07:00) and a refresh runs
          move LAT,LON    the phone moves (the weather refetches when it moved > 1 km)
          low-power on|off, background-refresh on|off, charging on|off, bucket NAME
          screen on|off, motion, idle force|step|off
                          Android Doze: the screen, the device picked up, and dumpsys deviceidle's
                          force-idle, step and unforce (screen off, unplugged and still: Doze);
                          iOS: screen, charging and network are the device in use or idle, its
                          charger and network, which a processing task waits for
          network on|off, battery-low on|off, storage-low on|off
                          Android: the device conditions --constraints waits for
          battery LEVEL   iOS: the battery's charge (15% or 0.15); on the usage model it drains
                          and charges from there (--battery-rates), and below 20 % unplugged
                          no app refresh runs
          initial-delay-met, period-delay-met, constraints-met
                          Android: androidx.work.testing TestDriver's setInitialDelayMet,
                          setPeriodDelayMet and setAllConstraintsMet for the refresh work
          stop REASON     Android: cmd jobscheduler stop -s REASON: the running worker is stopped
                          (or, with none running, the next run as it starts) with that WorkInfo
                          stop reason (STOP_REASON_USER, USER or 13)
          permission notifications grant|revoke
                          Android: POST_NOTIFICATIONS; revoked, bedtime notices are posted and
                          never shown, with no error (notification.hidden); a new install on
                          API 33+ starts with it revoked
          permission exact-alarm grant|revoke
                          Android: SCHEDULE_EXACT_ALARM; revoked, the OS deletes the phone alarm
                          with no broadcast (alarm.lost); granted, its broadcast lets the app
                          set it again (alarm.set); no effect with USE_EXACT_ALARM
          notifications authorized|denied|provisional|not-determined
                          iOS: the app's notification authorization (as --notifications);
                          on Android, use permission notifications
          clock-set ±DURATION
                          the user sets the device's wall clock by an offset (-12h, +90m,
                          +1h30m); true time goes on. iOS: significantTimeChangeNotification,
                          the pending request keeps its instant; Android: TIME_SET, WorkManager
                          replans from the wall clock. The app plans from the wall clock.
          push [normal|high]
                          a server push reaches the device (normal unless given): iOS a silent
                          background notification (30 s, at most 3 an hour, none after a
                          force-quit, with Background App Refresh off or in Low Power Mode),
                          Android an FCM message (high at once, normal deferred by
                          Doze to its maintenance window); the app runs the job for it
          force-quit      the user swipes the app away: no background runs until the next open
          registration M  the user installs an app update that registers early, late-silent or
                          late-crash (iOS): the app process ends; the new code runs from the
                          next launch (open, a background launch, or the next start)
          reboot          the device restarts: the app process is gone; pending work is kept
                          (iOS: a force-quit is lifted; Android: a force stop is not)
          simulate-launch       the debugger's _simulateLaunchForTaskWithIdentifier
          simulate-expiration   launch, then expire right after renew
          status          print a phone.status event (with the OS's view and its why)
          why             print an os.why event: every condition holding the pending refresh
                          back (reason codes as Android's PENDING_JOB_REASON_*), and when each lifts
          history         print a run.record event per run in the history (last 30)
          notifications   print a notification.pending event per pending notice
          quit            stop (as SIGINT/SIGTERM/SIGHUP and Ctrl-D on a terminal do)
        End of file on a stdin that is not a terminal (< /dev/null) ends only the command reader.

        Pairing (CURVE certificates for tcp, or for ipc if you like; see phone keygen --help):
          phone keygen --dir DIR  writes DIR/phone.key_secret (0600) and DIR/phone.key; copy
                                  phone.key to the watch and its watch.key into DIR

        Exit: 0 on SIGINT/SIGTERM/SIGHUP/quit/Ctrl-D or a closed stdout (EPIPE, `| head`),
              64 bad arguments (an option given twice too; also --platform or --registration
              against the stored OS),
              65 bad schedule, key or unreadable state file, 69 endpoint unusable or not
              private, 73 state dir or metrics dir unusable, or state dir in use, 74 stdout
              closed (>&-) or not writable (> /dev/full, a full disk; also for --help and
              --version).
        """

    /// `watch`'s options and texts.
    package static let watchCommand = CommandSpec(
        program: "watch",
        summary: """
            The watch half of SleepTap. Connects a ZeroMQ DEALER (routing id ID) to ENDPOINT, says
            HELLO on every (re)connect, stores each batch durably before acknowledging it, and keeps
            its cache across restarts. Events are JSON lines on stdout; diagnostics go to stderr.
            """,
        sections: [.init(nil, watchOptions + clockOptions(sameAsPhone: true) + [.helpOption(), .versionOption()])],
        footer: watchFooter)

    static let bedAt = ["--bed-at", "22:30"]

    static let watchOptions: [OptionSpec] = [
        OptionSpec(
            "--endpoint", value: "ENDPOINT", synopsis: .required, example: "ipc:///tmp/sleeptap/phone.sock",
            help: """
                the phone's endpoint (ipc://PATH or tcp://HOST:PORT); a relative PATH is resolved against
                the working directory at start
                """),
        OptionSpec(
            "--state-dir", value: "DIR", synopsis: .required, example: "/tmp/sleeptap/watch",
            help: "where watch.json (the cached batch) is kept; created if missing"),
        OptionSpec(
            "--time-zone", value: "TZ", example: "UTC",
            help: """
                IANA zone for typed wake times and --bed-at (default: the newest batch's zone, else the
                system zone; stdin time-zone wins over it)
                """),
        OptionSpec(
            "--tzdata", value: "DIR", example: "/usr/share/zoneinfo",
            help: """
                the IANA tz database (TZif files) of the watch's own local times (bed taps, manual entry);
                default: $TZDIR, else /usr/share/zoneinfo (a TZ, or TZ=:Zone, naming a zone it lacks is an
                error)
                """),
        OptionSpec("--id", value: "ID", example: "watch-2", help: "routing id, 1-255 bytes (default: watch)"),
        OptionSpec(
            "--keys", value: "DIR", example: "keys",
            help: """
                CURVE: DIR holds this watch's watch.key_secret (from `watch keygen --dir DIR`) and the
                phone's public certificate phone.key; DIR and its files must not be writable by group or
                others
                """),
        OptionSpec(
            "--insecure", synopsis: .orPrevious,
            help: "allow plaintext tcp, or an ipc socket in a directory others can reach"),
        OptionSpec(
            "--bed-at", value: "HH:MM", example: "22:30",
            help: "simulated user: tap bed every night at this local time"),
        OptionSpec(
            "--manual-wake", value: "HH:MM", synopsis: .insidePrevious, example: "06:45", needs: bedAt,
            help: "simulated user: answer a manual-entry prompt with this time"),
        OptionSpec(
            "--stop-alarm-after", value: "SECS", synopsis: .insidePrevious, example: "30", needs: bedAt,
            help: """
                simulated user: stop the ringing alarm this many virtual seconds after it began, 0-86400
                (default with --bed-at: 60); without a simulated user the alarm rings until stdin stop
                """),
        OptionSpec(
            "--warn-nights", value: "N", example: "3",
            help: """
                print coverage.low once when the cached wake-ups still ahead fall to N or fewer (checked
                at each applied batch and bed tap), 0-64, 0 never warns (default: 2)
                """),
        OptionSpec(
            "--request-dates",
            help: """
                while the nights left are at or below --warn-nights (1 or more) and the link is up, ask
                the phone for dates with a REQUEST (at a bed tap, an applied batch, the link coming up,
                and again an hour later while still low; at most one an hour of virtual time), only
                while the watch app is active
                """),
        OptionSpec(
            "--active-seconds", value: "SECS", synopsis: .insidePrevious, example: "60", needs: ["--request-dates"],
            help: """
                the watch app stays active SECS virtual seconds after each touch (bed, a typed wake time,
                stop, snooze), 0-3600 (default: 10); stdin wrist up keeps it active until wrist down
                """),
        OptionSpec(
            "--snooze-minutes", value: "N", example: "5",
            help: """
                how long stdin snooze silences the ringing alarm, 1-60 (default: 9, as the Clock app's
                snooze)
                """),
        OptionSpec(
            "--complication-budget", value: "N", example: "70",
            help: """
                the watch face's complication may reload this many times in any 24 h of virtual time,
                1-1000 (default: 40; WidgetKit gives a frequently viewed widget about 40 to 70 a day); it
                reloads only when the cached dates change
                """),
    ]

    static let watchFooter = """
        Pairing: watch keygen --dir DIR writes DIR/watch.key_secret (0600) and DIR/watch.key;
        copy watch.key to the phone and its phone.key into DIR (see watch keygen --help).

        stdin commands, one per line:
          bed           tap bed: bed.wake_time, or fallback.manual_entry then a typed HH:MM line
          HH:MM         the wake time, when asked for it
          stop          stop the ringing alarm (alarm.stopped)
          snooze        silence the ringing alarm for --snooze-minutes (alarm.snoozed)
          wrist up|down the user raises the wrist to look (the app is active) or lowers it
          time-zone TZ  the watch travels: its zone becomes TZ (IANA) until it stops, whatever
                        --time-zone or the batch say; --bed-at is planned again in TZ
          status        print a cache.status event
          complication  print the complication's timeline: complication.timeline, then one
                        complication.entry per entry (the next alarm it shows from when on)
          quit          stop (as SIGINT/SIGTERM/SIGHUP and Ctrl-D on a terminal do)
        End of file on a stdin that is not a terminal (< /dev/null) ends only the command reader.

        The zone the watch lives in, highest first: stdin time-zone, --time-zone, the newest
        batch's zone, the system zone (TZ). Whenever it changes, --bed-at is planned again in
        the new zone (timezone.changed).

        Exit: 0 on SIGINT/SIGTERM/SIGHUP/quit/Ctrl-D or a closed stdout (EPIPE, `| head`),
              64 bad arguments (an option given twice too), 65 bad key or unreadable state
              file, 69 endpoint unusable or not private, 73 state dir unusable or in use, 74
              stdout closed (>&-) or not writable (> /dev/full, a full disk; also for --help
              and --version).
        """

    /// `phone keygen`'s or `watch keygen`'s options and texts.
    package static func keygenCommand(_ role: Pairing.Role) -> CommandSpec {
        let program = role.rawValue
        let peer = role.peer.rawValue
        return CommandSpec(
            program: "\(program) keygen",
            summary: """
                Makes this \(program)'s CURVE key pair as ZeroMQ certificates (ZPL, the format of czmq's
                zcert and pyzmq's zmq.auth): DIR/\(program).key_secret, the secret certificate (mode 0600;
                it never leaves this device), and DIR/\(program).key, the public certificate. DIR is
                created (mode 0700) when missing; it must not be writable by group or others.
                Existing certificates are never overwritten.

                To pair, exchange public certificates only: copy \(program).key into the \(peer)'s keys
                directory, and the \(peer)'s \(peer).key (from `\(peer) keygen`) into DIR. Then run
                `\(program) --keys DIR ...`. On one machine both may share one directory.
                """,
            sections: [
                .init(
                    nil,
                    [
                        OptionSpec(
                            "--dir", value: "DIR", synopsis: .required, example: "keys",
                            help: "where to write the two certificates"),
                        .helpOption("this text"),
                    ])
            ],
            footer: """
                Exit: 0 written, 64 bad arguments, 73 a certificate exists or DIR is unusable, 74
                      stdout closed or not writable.
                """)
    }
}
