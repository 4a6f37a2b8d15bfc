// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapCommandLine
public import SleepTapCore
import SleepTapOS

/// Command-line parsing for both executables, kept in the library so it is unit-tested.
public enum CommandLineParser {
    public static let phoneUsage = """
        usage: phone --endpoint ENDPOINT --state-dir DIR [--schedule FILE] [--time-zone TZ] [--tzdata DIR]
                     [--keys DIR | --insecure]
                     [--watch-id ID] [--horizon-days N] [--device-seed N]
                     [--platform ios|android] [--registration early|late-silent|late-crash]
                     [--budget SECS] [--low-power] [--refresh-off] [--charging] [--bucket NAME]
                     [--interval SECS] [--android-api N] [--android16-quotas on|off]
                     [--constraints LIST] [--notifications STATE]
                     [--phone-alarm on|off] [--exact-alarm-permission schedule|use]
                     [--processing-task on|off]
                     [--os-seed N] [--step-costs STEP=SECS,...]
                     [--weather offline|open-meteo|URL] [--weather-cost SECS] [--location LAT,LON]
                     [--metrics-dir DIR] [--app-version V]
                     [--clock-start ISO8601 --clock-speed N --clock-anchor UNIX_SECONDS]

        The phone half of SleepTap. Binds a ZeroMQ ROUTER on ENDPOINT, runs a foreground refresh
        (as when the user opens the app): generates the next batch of wake-up dates, sends it to
        the watch, resends until acknowledged and answers every HELLO with the newest batch.
        Events are JSON lines on stdout; diagnostics go to stderr.

          --endpoint ENDPOINT   ipc://PATH or tcp://HOST:PORT (PORT may be *: phone.started says
                                which port was bound); a relative PATH is resolved against the
                                working directory at start, and must then be at most 107 bytes
          --state-dir DIR       where phone.json (outbox, last seq), phone-app.json (notices,
                                run history, forecast) and os.json (the simulated OS, which
                                outlives the app) are kept; created if missing
          --schedule FILE       weekly schedule, JSON (docs/schedule-format.md); default 07:00 daily
          --time-zone TZ        IANA zone, e.g. America/New_York; default: the schedule's, else system
          --tzdata DIR          the IANA tz database (TZif files, as zic writes them) whose rules
                                every wake-up uses; default: $TZDIR, else /usr/share/zoneinfo
                                (a TZ, or TZ=:Zone, naming a zone it lacks is an error)
          --watch-id ID         routing id of the watch to deliver to (default: watch)
          --horizon-days N      local days of wake-ups per batch, 1-64 (default: 7)
          --device-seed N       seed of the daily notice-text rotation (default: random at first
                                start, then kept in the state dir)
          --keys DIR            CURVE: DIR holds this phone's phone.key_secret (from `phone
                                keygen --dir DIR`) and the paired watch's public certificate
                                watch.key; only that watch is admitted (ZAP); DIR and its
                                files must not be writable by group or others
          --insecure            allow plaintext tcp, and an ipc socket in a directory other
                                users can reach (by default tcp needs --keys, and the ipc
                                directory must be yours and mode 0700; a missing one is made so)

        The simulated OS (docs/scheduler.md) and the consolidated refresh job. The OS keeps its
        state in DIR/os.json across restarts (pending requests, its random draws, settings); the
        defaults below are for a new one. A flag given at a restart overrides the stored value;
        a flag not given keeps it.
          --platform P          ios (BGTaskScheduler, default) or android (WorkManager); must
                                match the stored OS
          --registration M      early: handler registered in didFinishLaunching (default);
                                late-silent: registered after launch, accepted, never entered
                                (SwiftUI .backgroundTask on iOS 26.6); late-crash: the app dies
          --budget SECS         iOS app-refresh budget in virtual seconds (default: 30)
          --low-power           Low Power Mode on (no background runs)
          --refresh-off         Background App Refresh switched off (submit fails: unavailable)
          --charging            Android: charging, standby quotas lifted
          --bucket NAME         Android standby bucket: active, working_set, frequent, rare, restricted
          --interval SECS       Android periodic interval (raised to the 900 s minimum; default 21600)
          --android-api N       Android API level 21-36; selects the job quota table: below 33
                                the pre-Android 13 one (default), 33-35 Android 13-15 (adds a
                                4 h per 24 h execution cap), 36 Android 16
          --android16-quotas S  on (default) or off: Android 16's flagged quota values (active
                                20 min per 1 h, working_set 10 min per 4 h, frequent 10 min per
                                12 h); off keeps the Android 13-15 table; needs --android-api 36
          --constraints LIST    Android: the refresh work request's Constraints, comma-separated:
                                network, charging, device-idle, battery-not-low, storage-not-low
                                (or none, the default); the work waits while one is unmet and
                                `why` names it (PENDING_JOB_REASON_CONSTRAINT_*)
          --notifications STATE iOS: the app's notification authorization: authorized (default),
                                denied, provisional (quiet: Notification Center only) or
                                not-determined; denied and not-determined make every notice
                                fail (notification.failed, UNErrorDomain 1)
          --phone-alarm S       Android: on sets a companion phone alarm, setAlarmClock() for the
                                next wake-up (alarm.set, os.alarm.fired at its instant; Doze ends
                                3 min before it); off (default) sets none and cancels one left
                                set (the watch rings either way); the app's setting, not stored;
                                refused on iOS (this model has no iOS alarm API)
          --processing-task S   iOS: on also registers a BGProcessingTask and submits a nightly
                                BGProcessingTaskRequest on the charger (requiresExternalPower),
                                which runs the same job while the device is idle (stdin screen,
                                charging, network); off (default) submits none; the app's
                                setting, not stored; refused on Android
          --exact-alarm-permission P
                                Android: the exact alarm permission the app declares: schedule
                                (SCHEDULE_EXACT_ALARM, default; denied on a new install on API
                                34+: alarm.refused until `permission exact-alarm grant`) or use
                                (USE_EXACT_ALARM, an alarm-clock app's, granted at install)
          --os-seed N           seed of a new OS's launch-opportunity model (default: 1); a
                                stored OS goes on with its own draws
          --step-costs LIST     virtual seconds per job step, e.g. renew=0.1,notices=0.5,dates=2
          --weather W           offline (default, deterministic), open-meteo, or a base URL
          --weather-cost SECS   virtual seconds an offline fetch costs (default: 0.3)
          --location LAT,LON    the phone's location in degrees (default: 52.52,13.405)
          --metrics-dir DIR     append run records (docs/metrics.md) to
                                DIR/metrics/bg_runs/<device>-<YYYY-MM-DD>.json, one file per
                                UTC day; device = phone- and the device seed in hex
          --app-version V       the app build's version written in each run record
                                (appVersion; 1 to 64 printable ASCII characters; default: none)

          --clock-start ISO8601 virtual time at the anchor, e.g. 2025-03-06T17:00:00Z
          --clock-speed N       virtual seconds per wall second, up to 10000000 (default: 1)
          --clock-anchor SECS   wall UNIX time at which virtual time = --clock-start (default: now;
                                needs --clock-start)
          -h, --help            this text (wins over any other argument)
          --version             print the version

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
              private, 73 state dir or metrics dir unusable, or state dir in use, 74 stdout closed (>&-) or not writable
              (> /dev/full, a full disk; also for --help and --version).
        """

    public static let watchUsage = """
        usage: watch --endpoint ENDPOINT --state-dir DIR [--time-zone TZ] [--tzdata DIR] [--id ID]
                     [--keys DIR | --insecure]
                     [--bed-at HH:MM [--manual-wake HH:MM] [--stop-alarm-after SECS]]
                     [--warn-nights N] [--request-dates] [--snooze-minutes N]
                     [--complication-budget N]
                     [--clock-start ISO8601 --clock-speed N --clock-anchor UNIX_SECONDS]

        The watch half of SleepTap. Connects a ZeroMQ DEALER (routing id ID) to ENDPOINT, says
        HELLO on every (re)connect, stores each batch durably before acknowledging it, and keeps
        its cache across restarts. Events are JSON lines on stdout; diagnostics go to stderr.

          --endpoint ENDPOINT   the phone's endpoint (ipc://PATH or tcp://HOST:PORT); a relative
                                PATH is resolved against the working directory at start
          --state-dir DIR       where watch.json (the cached batch) is kept; created if missing
          --time-zone TZ        IANA zone for typed wake times and --bed-at (default: the newest
                                batch's zone, else the system zone; stdin time-zone wins over it)
          --tzdata DIR          the IANA tz database (TZif files) of the watch's own local times
                                (bed taps, manual entry); default: $TZDIR, else /usr/share/zoneinfo
                                (a TZ, or TZ=:Zone, naming a zone it lacks is an error)
          --id ID               routing id, 1-255 bytes (default: watch)
          --bed-at HH:MM        simulated user: tap bed every night at this local time
          --manual-wake HH:MM   simulated user: answer a manual-entry prompt with this time
          --stop-alarm-after SECS  simulated user: stop the ringing alarm this many virtual
                                seconds after it began, 0-86400 (default with --bed-at: 60);
                                without a simulated user the alarm rings until stdin stop
          --snooze-minutes N    how long stdin snooze silences the ringing alarm, 1-60
                                (default: 9, as the Clock app's snooze)
          --complication-budget N  the watch face's complication may reload this many times in
                                any 24 h of virtual time, 1-1000 (default: 40; WidgetKit gives a
                                frequently viewed widget about 40 to 70 a day); it reloads only
                                when the cached dates change
          --warn-nights N       print coverage.low once when the cached wake-ups still ahead fall
                                to N or fewer (checked at each applied batch and bed tap),
                                0-64, 0 never warns (default: 2)
          --request-dates       while the nights left are at or below --warn-nights (1 or more)
                                and the link is up, ask the phone for dates with a REQUEST (at a
                                bed tap, an applied batch, the link coming up, and again an hour
                                later while still low; at most one an hour of virtual time)
          --keys DIR            CURVE: DIR holds this watch's watch.key_secret (from `watch
                                keygen --dir DIR`) and the phone's public certificate phone.key;
                                DIR and its files must not be writable by group or others
          --insecure            allow plaintext tcp, or an ipc socket in a directory others can reach
          --clock-start, --clock-speed, --clock-anchor   as for phone (use the same values)
          -h, --help            this text (wins over any other argument)
          --version             print the version

        Pairing: watch keygen --dir DIR writes DIR/watch.key_secret (0600) and DIR/watch.key;
        copy watch.key to the phone and its phone.key into DIR (see watch keygen --help).

        stdin commands, one per line:
          bed           tap bed: bed.wake_time, or fallback.manual_entry then a typed HH:MM line
          HH:MM         the wake time, when asked for it
          stop          stop the ringing alarm (alarm.stopped)
          snooze        silence the ringing alarm for --snooze-minutes (alarm.snoozed)
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

    /// `phone keygen --help` / `watch keygen --help`.
    public static func keygenUsage(_ role: Pairing.Role) -> String {
        let program = role.rawValue
        let peer = role.peer.rawValue
        return """
            usage: \(program) keygen --dir DIR

            Makes this \(program)'s CURVE key pair as ZeroMQ certificates (ZPL, the format of czmq's
            zcert and pyzmq's zmq.auth): DIR/\(program).key_secret, the secret certificate (mode 0600;
            it never leaves this device), and DIR/\(program).key, the public certificate. DIR is
            created (mode 0700) when missing; it must not be writable by group or others.
            Existing certificates are never overwritten.

            To pair, exchange public certificates only: copy \(program).key into the \(peer)'s keys
            directory, and the \(peer)'s \(peer).key (from `\(peer) keygen`) into DIR. Then run
            `\(program) --keys DIR ...`. On one machine both may share one directory.

              --dir DIR    where to write the two certificates
              -h, --help   this text

            Exit: 0 written, 64 bad arguments, 73 a certificate exists or DIR is unusable, 74
                  stdout closed or not writable.
            """
    }

    /// Parses `keygen` arguments (those after `keygen`); `--help`, `-h` and `--version` win wherever
    /// they stand.
    /// - Returns: the directory to write, help or version.
    /// - Throws: `UsageError` naming the flag and what is wrong.
    public static func parseKeygen(_ arguments: [String]) throws(UsageError) -> Parsed<String> {
        if let request = Parsed<String>.informationRequest(in: arguments) { return request }
        var reader = ArgumentReader(arguments)
        var directory: String?
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--dir": directory = try reader.nonEmpty(flag)
            default: throw ArgumentReader.unknown(flag)
            }
        }
        guard let directory else { throw UsageError("--dir is required") }
        return .run(directory)
    }

    /// Parses `phone` arguments (without the program name).
    /// - Throws: `UsageError` naming the flag and what is wrong with its value.
    public static func parsePhone(
        _ arguments: [String], workingDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(UsageError) -> Parsed<PhoneOptions> {
        if let request = Parsed<PhoneOptions>.informationRequest(in: arguments) { return request }
        let zones = try zoneDatabaseFlag(in: arguments)
        return try ZoneDatabase.$scoped.withValue(zones ?? ZoneDatabase.current) {
            Result { () throws(UsageError) in
                var parsed = try phoneFlags(arguments, workingDirectory: workingDirectory)
                if case .run(var options) = parsed {
                    options.zoneDatabase = zones
                    parsed = .run(options)
                }
                return parsed
            }
        }.get()
    }

    private static func phoneFlags(_ arguments: [String], workingDirectory: String) throws(UsageError)
        -> Parsed<PhoneOptions>
    {
        var reader = ArgumentReader(arguments)
        var endpoint: Endpoint?
        var stateDirectory: String?
        var schedule: String?
        var zone: TimeZone?
        var clock = ClockOptions()
        var watchId = "watch"
        var horizon = BatchPlanner.defaultHorizonDays
        var deviceSeed: UInt64?
        var os = OSOptions()
        var weather = WeatherOptions()
        var location = PhoneOptions.defaultLocation
        var insecure = false
        var keys: String?
        var metrics: String?
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--endpoint": endpoint = try reader.endpoint(flag, workingDirectory: workingDirectory)
            case "--state-dir": stateDirectory = try reader.nonEmpty(flag)
            case "--schedule": schedule = try reader.nonEmpty(flag)
            case "--time-zone": zone = try reader.timeZone(flag)
            case "--tzdata": _ = try reader.nonEmpty(flag)
            case "--watch-id": watchId = try reader.routingId(flag)
            case "--horizon-days": horizon = try reader.integer(flag, in: 1...WireCodec.maxEntries)
            case "--device-seed": deviceSeed = try reader.unsignedInteger(flag)
            case "--platform":
                let text = try reader.value(flag)
                guard let platform = Platform(rawValue: text) else {
                    throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": expected ios or android")
                }
                os.platform = platform
            case "--registration":
                let text = try reader.value(flag)
                guard let mode = RegistrationMode(rawValue: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected early, late-silent or late-crash")
                }
                os.registration = mode
            case "--budget": os.budget = try reader.seconds(flag, in: 0.1...600)
            case "--insecure": insecure = true
            case "--keys": keys = try reader.nonEmpty(flag)
            case "--metrics-dir": metrics = try reader.nonEmpty(flag)
            case "--app-version":
                let text = try reader.value(flag)
                guard RunRecord.isValidAppVersion(text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected 1 to 64 printable ASCII characters, e.g. 1.4.2"
                    )
                }
                os.appVersion = text
            case "--low-power": os.lowPower = true
            case "--refresh-off": os.backgroundRefresh = false
            case "--charging": os.charging = true
            case "--notifications":
                let text = try reader.value(flag)
                guard let state = NotificationAuthorization(rawValue: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected authorized, denied, provisional or "
                            + "not-determined")
                }
                os.notifications = state
            case "--bucket":
                let text = try reader.value(flag)
                guard let bucket = StandbyBucket(name: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected active, working_set, frequent, rare or restricted"
                    )
                }
                os.bucket = bucket
            case "--interval":
                os.interval = try reader.seconds(flag, in: 1...(30 * 86_400))
            case "--android-api":
                let text = try reader.value(flag)
                guard let api = Int(text), (AndroidAPI.minimum...AndroidAPI.maximum).contains(api) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected an API level from \(AndroidAPI.minimum) to "
                            + "\(AndroidAPI.maximum) (Android 13 is 33, Android 15 is 35, Android 16 is 36)")
                }
                os.androidAPI = api
            case "--android16-quotas": os.android16Flags = try reader.onOff(flag)
            case "--constraints":
                let text = try reader.value(flag)
                switch WorkConstraint.parseList(text) {
                case .success(let list): os.constraints = list
                case .failure(let error):
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": \"\(ArgumentReader.clip(error.value))\" is not a "
                            + "constraint; expected a comma-separated list of \(WorkConstraint.names), or none")
                }
            case "--phone-alarm": os.phoneAlarm = try reader.onOff(flag)
            case "--processing-task": os.processingTask = try reader.onOff(flag)
            case "--exact-alarm-permission":
                let text = try reader.value(flag)
                guard let declaration = ExactAlarmDeclaration(rawValue: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected schedule (SCHEDULE_EXACT_ALARM) or use "
                            + "(USE_EXACT_ALARM, an alarm-clock app's)")
                }
                os.exactAlarmPermission = declaration
            case "--os-seed": os.seed = try reader.unsignedInteger(flag)
            case "--step-costs": os.stepCosts = try reader.stepCosts(flag)
            case "--weather":
                let text = try reader.value(flag)
                if text == "offline" {
                    weather.openMeteoBase = nil
                } else if text == "open-meteo" {
                    weather.openMeteoBase = OpenMeteo.defaultBaseURL
                } else if let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil {
                    weather.openMeteoBase = url
                } else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected offline, open-meteo, or an http(s) base URL of an Open-Meteo server"
                    )
                }
            case "--weather-cost": weather.offlineCost = try reader.seconds(flag, in: 0...600)
            case "--location":
                let text = try reader.value(flag)
                guard let coordinate = PhoneOptions.parseCoordinate(text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected LAT,LON in decimal degrees, e.g. 52.52,13.405"
                    )
                }
                location = coordinate
            default:
                if try reader.clockFlag(flag, into: &clock) { continue }
                throw ArgumentReader.unknown(flag)
            }
        }
        guard let endpoint else { throw UsageError("--endpoint is required") }
        guard let stateDirectory else { throw UsageError("--state-dir is required") }
        try clock.check()
        var options = PhoneOptions(endpoint: endpoint, stateDirectory: stateDirectory)
        options.schedulePath = schedule
        options.timeZone = zone
        options.clock = clock
        options.watchId = watchId
        options.horizonDays = horizon
        options.deviceSeed = deviceSeed
        options.os = os
        options.weather = weather
        options.location = location
        options.insecure = insecure
        options.keysDirectory = keys
        options.metricsDirectory = metrics
        try requireCurveOnTCP(endpoint: endpoint, keys: keys, insecure: insecure)
        if os.platform != .android && (os.bucket != nil || os.charging != nil || os.interval != nil) {
            throw UsageError("--bucket, --charging and --interval are Android settings: add --platform android")
        }
        if os.platform == .android && os.notifications != nil {
            throw UsageError(
                "--notifications is iOS's notification authorization (UNUserNotificationCenter); on Android "
                    + "the app's notifications follow its permission: stdin permission notifications grant|revoke")
        }
        if os.platform != .android && os.constraints != nil {
            throw UsageError(
                "--constraints is an Android setting (WorkManager Constraints); iOS BGAppRefreshTask has no "
                    + "constraints in this model: add --platform android")
        }
        if os.platform != .android && os.phoneAlarm == true {
            throw UsageError(
                "--phone-alarm on sets an Android AlarmManager.setAlarmClock() alarm; this model has no iOS alarm "
                    + "API (the watch rings either way): add --platform android, or leave --phone-alarm off")
        }
        if os.platform == .android && os.processingTask == true {
            throw UsageError(
                "--processing-task on submits an iOS BGProcessingTaskRequest; WorkManager's equivalent is "
                    + "--constraints charging,device-idle: leave --processing-task off on Android")
        }
        if os.platform != .android && os.exactAlarmPermission != nil {
            throw UsageError(
                "--exact-alarm-permission is an Android setting (SCHEDULE_EXACT_ALARM or USE_EXACT_ALARM): add "
                    + "--platform android")
        }
        if os.platform != .android && (os.androidAPI != nil || os.android16Flags != nil) {
            throw UsageError("--android-api and --android16-quotas are Android settings: add --platform android")
        }
        if let api = os.androidAPI, api < AndroidAPI.android16, os.android16Flags != nil {
            throw UsageError(
                "--android16-quotas switches Android 16's flagged quota values: it needs --android-api 36, not \(api)")
        }
        if os.platform == .android, let registration = os.registration, registration != .early {
            throw UsageError(
                "--registration \(registration.rawValue) is an iOS failure (BGTaskScheduler launch handlers); "
                    + "WorkManager has no registration step")
        }
        return .run(options)
    }

    /// Parses `watch` arguments (without the program name).
    /// - Throws: `UsageError` naming the flag and what is wrong with its value.
    public static func parseWatch(
        _ arguments: [String], workingDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(UsageError) -> Parsed<WatchOptions> {
        if let request = Parsed<WatchOptions>.informationRequest(in: arguments) { return request }
        let zones = try zoneDatabaseFlag(in: arguments)
        return try ZoneDatabase.$scoped.withValue(zones ?? ZoneDatabase.current) {
            Result { () throws(UsageError) in
                var parsed = try watchFlags(arguments, workingDirectory: workingDirectory)
                if case .run(var options) = parsed {
                    options.zoneDatabase = zones
                    parsed = .run(options)
                }
                return parsed
            }
        }.get()
    }

    private static func watchFlags(_ arguments: [String], workingDirectory: String) throws(UsageError)
        -> Parsed<WatchOptions>
    {
        var reader = ArgumentReader(arguments)
        var endpoint: Endpoint?
        var stateDirectory: String?
        var zone: TimeZone?
        var clock = ClockOptions()
        var id = "watch"
        var bedAt: LocalTime?
        var manualWake: LocalTime?
        var warnNights = WatchNode.Configuration.defaultWarnNights
        var requestDates = false
        var insecure = false
        var keys: String?
        var stopAlarmAfter: TimeInterval?
        var snoozeMinutes = Int(WatchNode.Configuration.defaultSnooze / 60)
        var complicationBudget = Complication.defaultBudget
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--endpoint": endpoint = try reader.endpoint(flag, workingDirectory: workingDirectory)
            case "--state-dir": stateDirectory = try reader.nonEmpty(flag)
            case "--time-zone": zone = try reader.timeZone(flag)
            case "--tzdata": _ = try reader.nonEmpty(flag)
            case "--id": id = try reader.routingId(flag)
            case "--stop-alarm-after": stopAlarmAfter = try reader.plainSeconds(flag, in: 0...86_400)
            case "--snooze-minutes": snoozeMinutes = try reader.integer(flag, in: 1...60)
            case "--complication-budget": complicationBudget = try reader.integer(flag, in: 1...1_000)
            case "--bed-at": bedAt = try reader.localTime(flag)
            case "--manual-wake": manualWake = try reader.localTime(flag)
            case "--warn-nights": warnNights = try reader.integer(flag, in: 0...WireCodec.maxEntries)
            case "--request-dates": requestDates = true
            case "--insecure": insecure = true
            case "--keys": keys = try reader.nonEmpty(flag)
            default:
                if try reader.clockFlag(flag, into: &clock) { continue }
                throw ArgumentReader.unknown(flag)
            }
        }
        guard let endpoint else { throw UsageError("--endpoint is required") }
        guard let stateDirectory else { throw UsageError("--state-dir is required") }
        if manualWake != nil && bedAt == nil {
            throw UsageError("--manual-wake needs --bed-at (it answers the simulated user's prompt)")
        }
        if stopAlarmAfter != nil && bedAt == nil {
            throw UsageError("--stop-alarm-after needs --bed-at (it is the simulated user's stop)")
        }
        if requestDates && warnNights == 0 {
            throw UsageError(
                "--request-dates needs --warn-nights 1 or more (it asks when the nights left fall to that many)")
        }
        try clock.check()
        var options = WatchOptions(endpoint: endpoint, stateDirectory: stateDirectory)
        options.timeZone = zone
        options.clock = clock
        options.id = id
        options.bedAt = bedAt
        options.manualWake = manualWake
        options.warnNights = warnNights
        options.requestDates = requestDates
        options.snooze = TimeInterval(snoozeMinutes * 60)
        options.complicationBudget = complicationBudget
        options.userStopsAlarmAfter =
            bedAt == nil ? nil : stopAlarmAfter ?? WatchNode.Configuration.defaultUserStop
        options.insecure = insecure
        options.keysDirectory = keys
        if case .tcp(_, nil) = endpoint {
            throw UsageError(
                "--endpoint \"\(ArgumentReader.clip(endpoint.description))\": a watch connects to a real port, not *")
        }
        try requireCurveOnTCP(endpoint: endpoint, keys: keys, insecure: insecure)
        return .run(options)
    }
}

/// The database `--tzdata DIR` (or `--tzdata=DIR`) names (the last one given), read before the
/// other flags so that `--time-zone` is checked against it (and `--version` prints its version);
/// nil without the flag.
/// - Throws: `UsageError` when DIR is not given, does not exist or is not a directory.
public func zoneDatabaseFlag(in arguments: [String]) throws(UsageError) -> ZoneDatabase? {
    // `--tzdata DIR` or `--tzdata=DIR`, as the flag parsers read every flag.
    guard
        let index = arguments.lastIndex(where: { $0 == "--tzdata" || $0.hasPrefix("--tzdata=") })
    else { return nil }
    let path: String
    if arguments[index] == "--tzdata" {
        guard index + 1 < arguments.count else { throw UsageError("--tzdata needs a directory of TZif files") }
        path = arguments[index + 1]
    } else {
        path = String(arguments[index].dropFirst("--tzdata=".count))
    }
    guard !path.isEmpty else { throw UsageError("--tzdata needs a directory of TZif files") }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw UsageError("--tzdata \"\(ArgumentReader.clip(path))\": no such directory")
    }
    return ZoneDatabase.directory(path)
}

/// tcp carries the link beyond this user's reach: CURVE is required unless `--insecure`.
func requireCurveOnTCP(endpoint: Endpoint, keys: String?, insecure: Bool) throws(UsageError) {
    if keys != nil && insecure {
        throw UsageError("--keys and --insecure exclude each other: CURVE with the paired keys, or plaintext")
    }
    guard case .tcp = endpoint, keys == nil, !insecure else { return }
    throw UsageError(
        "--endpoint \"\(ArgumentReader.clip(endpoint.description))\": tcp needs CURVE: pass --keys DIR (certificates from `keygen --dir DIR`), "
            + "or --insecure for plaintext")
}
