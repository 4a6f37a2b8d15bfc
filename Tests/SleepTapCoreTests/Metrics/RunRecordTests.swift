// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// Run records (docs/metrics.md): the value, its file format, and what the phone app produces.
@Suite("Run records")
struct RunRecordTests {
    static let t0 = ISO8601.date("2026-03-02T06:00:00Z")!

    static func sample() -> [RunRecord] {
        [
            RunRecord(
                device: "dev-1", platform: .ios, kind: .submitted, at: t0,
                earliestBeginDate: t0.addingTimeInterval(86_400), lowPower: false, stalenessHours: nil),
            RunRecord(
                device: "dev-1", platform: .ios, kind: .background, at: t0.addingTimeInterval(0.45),
                earliestBeginDate: t0.addingTimeInterval(-3_600), success: true, expired: false, lowPower: true,
                stalenessHours: 0),
            RunRecord(
                device: "dev-2", platform: .android, kind: .submitFailed, at: t0, lowPower: false, bucket: .rare,
                attempt: 2, stalenessHours: 26.5, reason: "unavailable \"quoted\""),
            RunRecord(
                device: "dev-2", platform: .android, kind: .foreground, at: t0, lowPower: false, bucket: .workingSet,
                stalenessHours: 7.25),
            RunRecord(device: "dev-3", platform: .ios, kind: .dropped, at: t0, lowPower: false),
            RunRecord(
                device: "dev-3", platform: .android, kind: .push, at: t0, success: false, expired: true,
                lowPower: false, bucket: .rare, stalenessHours: 3),
        ]
    }

    @Test("A file reads back to the records written, and the same records give the same bytes")
    func roundTrip() throws {
        let records = Self.sample()
        let data = RunRecordFile.encode(records)
        #expect(try RunRecordFile.decode(data) == records)
        #expect(RunRecordFile.encode(try RunRecordFile.decode(data)) == data)
        let text = String(decoding: data, as: UTF8.self)
        #expect(
            text.hasPrefix(
                "[\n{\"appVersion\":null,\"at\":\"2026-03-02T06:00:00.000Z\",\"attempt\":null,\"bucket\":null,"))
        #expect(text.contains("\"at\":\"2026-03-02T06:00:00.450Z\""))
        #expect(text.hasSuffix("}\n]\n"))
        #expect(text.split(separator: "\n").count == records.count + 2, "one record per line")
        #expect(try RunRecordFile.decode(Data("[]".utf8)).isEmpty)
        // JSONDecoder and JSONEncoder agree with the file's reader.
        let decoded = try JSONDecoder().decode([RunRecord].self, from: data)
        #expect(decoded == records)
        #expect(try RunRecordFile.decode(JSONEncoder().encode(records)) == records)
    }

    /// `text`'s records by both readers: the strict scan's values and `JSONDecoder`.
    static func bothReaders(_ text: String) -> (
        scanned: Result<[RunRecord], RunRecordFile.Problem>, decoder: Result<[RunRecord], RunRecordFile.Problem>
    ) {
        func read(_ scanned: Bool) -> Result<[RunRecord], RunRecordFile.Problem> {
            var records: [RunRecord] = []
            do throws(RunRecordFile.Problem) {
                try RunRecordFile.decode(Data(text.utf8), readingScannedValues: scanned) { records.append($0) }
                return .success(records)
            } catch {
                return .failure(error)
            }
        }
        return (read(true), read(false))
    }

    @Test("The scan's values give the records JSONDecoder gives, and the plain files are read from them")
    func scannedValuesMatchDecoder() throws {
        let base = #""at":"2026-03-02T06:00:00Z","bucket":"active","device":"d","lowPower":false,"platform":"android""#
        let plain = [
            // Every key, in another order than the writer's, numbers in each JSON form.
            #"[{"success":true,"stopReason":1.0e0,"stalenessHours":26.50,"reason":null,"platform":"android","lowPower":true,"kind":"background","expired":false,"earliestBeginDate":"2026-03-02T05:00:00.250Z","device":"dev-9","bucket":"rare","attempt":3,"at":"2026-03-02T06:00:00.450Z","appVersion":"2.1"}]"#,
            #"[{\#(base),"kind":"submit_failed","attempt":0,"stalenessHours":-0,"reason":"unavailable"}]"#,
            #"[{\#(base),"kind":"foreground","stalenessHours":1E-2}, {\#(base),"kind":"dropped"}]"#,
            #"[ ]"#,
            String(decoding: RunRecordFile.encode(Self.sample().filter { $0.reason == nil }), as: UTF8.self),
        ]
        for text in plain {
            let data = Data(text.utf8)
            let scan = JSONDiagnosis.scanRecords(data, elementKeys: RunRecord.keys, keepingValues: true)
            #expect(RunRecordFile.plainRows(data, scan) != nil, "read from the scan: \(text)")
            let (scanned, decoder) = Self.bothReaders(text)
            #expect(try scanned.get() == decoder.get(), "\(text)")
        }
        #expect(try Self.bothReaders(plain[0]).scanned.get().first?.stopReason == 1)
        #expect(try Self.bothReaders(plain[2]).scanned.get().first?.stalenessHours == 0.01)
        // What the scan does not read goes to JSONDecoder, whose answer (records or problem) stands.
        let other = [
            #"[{\#(base),"kind":"submit_failed","reason":"say \"hi\""}]"#,  // an escape
            #"[{\#(base),"kind":"submit_failed","reason":"café"}]"#,  // not ASCII
            #"[{\#(base),"kind":"foreground","stalenessHours":1e-400}]"#,  // an underflow
            #"[{\#(base),"kind":"foreground","lowPower":1}]"#,
            #"[{\#(base),"kind":null}]"#,
            #"[{\#(base)}]"#,
            #"[{\#(base),"kind":"foreground","stalenessHours":"1"}]"#,
            #"[{\#(base),"kind":"foreground","expired":[]}]"#,
            #"[{\#(base),"kind":"foreground"}, 7]"#,
            #"{\#(base),"kind":"foreground"}"#,
        ]
        for text in other {
            let data = Data(text.utf8)
            let scan = JSONDiagnosis.scanRecords(data, elementKeys: RunRecord.keys, keepingValues: true)
            #expect(RunRecordFile.plainRows(data, scan) == nil, "left to JSONDecoder: \(text)")
            let (scanned, decoder) = Self.bothReaders(text)
            #expect(scanned == decoder, "\(text)")
        }
        #expect(try Self.bothReaders(other[0]).scanned.get().first?.reason == "say \"hi\"")
    }

    @Test("stopReason: Android background only, 0 to 15, written and read back; absent (older files) reads as null")
    func stopReason() throws {
        let record = RunRecord(
            device: "d", platform: .android, kind: .background, at: Date(timeIntervalSince1970: 1_780_000_000),
            earliestBeginDate: Date(timeIntervalSince1970: 1_779_999_000), success: false, expired: true,
            bucket: .rare, attempt: 0, stopReason: 10)
        #expect(record.problem == nil)
        let data = RunRecordFile.encode([record])
        #expect(String(decoding: data, as: UTF8.self).contains(#""stalenessHours":null,"stopReason":10,"success""#))
        #expect(try RunRecordFile.decode(data) == [record])
        #expect(try JSONDecoder().decode([RunRecord].self, from: data) == [record])
        let absent =
            #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"}]"#
        #expect(try RunRecordFile.decode(Data(absent.utf8)).first?.stopReason == nil)
        var ios = record
        ios.platform = .ios
        ios.bucket = nil
        ios.attempt = nil
        #expect(ios.problem?.field == "stopReason")
        var foreground = record
        foreground.kind = .foreground
        foreground.success = nil
        foreground.expired = nil
        foreground.earliestBeginDate = nil
        #expect(foreground.problem?.field == "stopReason")
        let android =
            #""device":"d","earliestBeginDate":"2026-03-02T05:00:00Z","expired":true,"kind":"background","lowPower":false,"platform":"android","success":false"#
        for (value, message) in [
            ("16", "record 0, field stopReason = 16.0: expected a STOP_REASON_* code from 0 to 15 or null"),
            ("2.5", "record 0, field stopReason = 2.5: expected a STOP_REASON_* code from 0 to 15 or null"),
        ] {
            let text = #"[{"at":"2026-03-02T06:00:00Z","bucket":"rare","# + android + #","stopReason":"# + value + "}]"
            do {
                _ = try RunRecordFile.decode(Data(text.utf8))
                Issue.record("\(value) accepted")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }

    @Test(
        "appVersion: optional (absent reads as null), written and read back; a bad one and unknown keys are still refused"
    )
    func appVersion() throws {
        var record = Self.sample()[0]
        record.appVersion = "1.4.2 (312)"
        let data = RunRecordFile.encode([record])
        #expect(String(decoding: data, as: UTF8.self).contains("{\"appVersion\":\"1.4.2 (312)\",\"at\""))
        #expect(try RunRecordFile.decode(data) == [record])
        #expect(try JSONDecoder().decode([RunRecord].self, from: data) == [record])
        let absent =
            #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"}]"#
        #expect(try RunRecordFile.decode(Data(absent.utf8)).first?.appVersion == nil)
        let cases: [(String, String)] = [
            (
                #"[{"appVersion":"","at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"}]"#,
                "record 0, field appVersion: must be 1 to 64 printable ASCII characters or null"
            ),
            (
                #"[{"appVersion":2,"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"}]"#,
                "record 0, field appVersion = 2: expected a string or null"
            ),
            (
                #"[{"appversion":"1","at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"}]"#,
                "record 0, field appversion: unknown key (expected appVersion, at,"
            ),
        ]
        for (text, message) in cases {
            #expect(throws: RunRecordFile.Problem.self) { try RunRecordFile.decode(Data(text.utf8)) }
            do {
                _ = try RunRecordFile.decode(Data(text.utf8))
            } catch {
                #expect(error.description.hasPrefix(message), "\(error.description)")
            }
        }
        // The phone app stamps its configured version on every record.
        #expect(RunRecord.isValidAppVersion("1.0") && !RunRecord.isValidAppVersion("1\n0"))
    }

    @Test("File names: the device and the UTC day of the record")
    func fileName() {
        // 23:30 in New York on 1 March is 04:30 UTC on 2 March.
        let late = ISO8601.date("2026-03-01T23:30:00-05:00")!
        #expect(RunRecordFile.fileName(device: "dev-1", day: late) == "dev-1-2026-03-02.json")
        #expect(RunRecordFile.instantString(ISO8601.date("1999-12-31T23:59:59.9996Z")!) == "2000-01-01T00:00:00.000Z")
        #expect(RunRecordFile.instantString(ISO8601.date("2024-02-29T12:00:00Z")!) == "2024-02-29T12:00:00.000Z")
        #expect(
            RunRecordFile.instantString(Date(timeIntervalSince1970: 1_772_000_000.0071)) == "2026-02-25T06:13:20.007Z")
        #expect(
            RunRecordFile.instantString(Date(timeIntervalSince1970: 1_772_000_000.045)) == "2026-02-25T06:13:20.045Z")
        #expect(
            RunRecordFile.instantString(Date(timeIntervalSince1970: 1_772_000_059.999)) == "2026-02-25T06:14:19.999Z")
        // Before 1970 the text is Foundation's, with the same millisecond rule.
        #expect(RunRecordFile.instantString(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
        // Every millisecond of a second, written and parsed back.
        for ms in 0..<1_000 {
            let instant = Date(timeIntervalSince1970: 1_772_000_000 + Double(ms) / 1_000)
            let text = RunRecordFile.instantString(instant)
            #expect(text.hasPrefix("2026-02-25T06:13:20.") && text.hasSuffix("Z") && text.count == 24)
            let parsed = RunRecordFile.parseInstant(ArraySlice(text.utf8))
            #expect(parsed.map { abs($0.timeIntervalSince(instant)) < 0.000_5 } == true, "\(text)")
        }
    }

    @Test(
        "Bad records are refused, naming the record's index and the field",
        arguments: [
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","colour":1}]"#,
                "record 0, field colour: unknown key"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"},{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":"no","platform":"ios"}]"#,
                "record 1, field lowPower = \"no\": expected true or false"
            ),
            (
                #"[{"at":"2026-02-30T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"}]"#,
                "record 0, field at = \"2026-02-30T06:00:00Z\": expected an ISO-8601 UTC instant"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"background","lowPower":false,"platform":"ios"}]"#,
                "record 0, field success: required for kind background"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","bucket":"rare"}]"#,
                "record 0, field bucket: iOS has no standby bucket"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"push","lowPower":false,"platform":"ios","expired":false}]"#,
                "record 0, field success: required for kind push"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"push","lowPower":false,"platform":"ios","expired":false,"success":true,"earliestBeginDate":"2026-03-02T05:00:00Z"}]"#,
                "record 0, field earliestBeginDate: kind push has none"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","attempt":0}]"#,
                "record 0, field attempt: only android records have it"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"nap","lowPower":false,"platform":"ios"}]"#,
                "record 0, field kind = \"nap\": expected submitted, submit_failed, background, dropped, foreground or push"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"android","bucket":"sleepy"}]"#,
                "record 0, field bucket = \"sleepy\": expected active"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","stalenessHours":-1}]"#,
                "record 0, field stalenessHours: must be a finite number"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","stalenessHours":1e308}]"#,
                "record 0, field stalenessHours: longer ago than 1970-01-01"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","device":"e"}]"#,
                "record 0, field device: appears twice"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","kind":"foreground","lowPower":false,"platform":"ios"}]"#,
                "record 0, field device: missing"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"../x","kind":"foreground","lowPower":false,"platform":"ios"}]"#,
                "record 0, field device: must be 1 to 64"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","attempt":1.5}]"#,
                "record 0, field attempt = 1.5: expected a whole number"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","reason":{}}]"#,
                "record 0, field reason: found an object"
            ),
            (
                // Record 0 lacks an optional key and has an unknown one; record 1 is whole.
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","x":1},{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","reason":null}]"#,
                "record 0, field x: unknown key"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios"},{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","\u0078":null}]"#,
                "record 1, field x: unknown key"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","reason":null,"re\u0061son":null}]"#,
                "record 0, field reason: appears twice"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":null,"kind":"foreground","lowPower":false,"platform":"ios"}]"#,
                "record 0, field device: is null; required"
            ),
            (
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","stalenessHours":"3"}]"#,
                "record 0, field stalenessHours = \"3\": expected a number or null"
            ),
            (
                // Problems come in record order: a wrong type in record 0 before an unknown key in 1 ...
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":"no","platform":"ios"},{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","x":1}]"#,
                "record 0, field lowPower = \"no\": expected true or false"
            ),
            (
                // ... an unknown key in record 0 before a wrong type in record 1 ...
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","x":1},{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":"no","platform":"ios"}]"#,
                "record 0, field x: unknown key"
            ),
            (
                // ... a bad value in record 0 before an unknown key in record 1 ...
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"windows"},{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","x":1}]"#,
                "record 0, field platform = \"windows\": expected ios or android"
            ),
            (
                // ... and in one record, the unknown key first.
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":"no","platform":"ios","x":1}]"#,
                "record 0, field x: unknown key"
            ),
            (
                // A key inside a value is not a record's key.
                #"[{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","reason":{"x":1}}]"#,
                "record 0, field reason: found an object"
            ),
            (#"{"records":[]}"#, "the top level must be a JSON array"),
            (#"[1]"#, "record 0: must be an object"),
            (#"[{"at":"2026-03-02T06:00:00Z",}]"#, "not valid JSON: line 1, column 31"),
            ("garbage \u{1}\u{2}", "not valid JSON: line 1, column 1"),
        ])
    func strict(text: String, message: String) {
        #expect(throws: (any Error).self) { try RunRecordFile.decode(Data(text.utf8)) }
        do {
            _ = try RunRecordFile.decode(Data(text.utf8))
        } catch {
            #expect(error.description.hasPrefix(message), "\(error)")
        }
    }

    @Test("JSONDecoder refuses an unknown key and a kind's missing field, naming the field")
    func codableStrict() {
        let unknown =
            #"{"at":"2026-03-02T06:00:00Z","device":"d","kind":"foreground","lowPower":false,"platform":"ios","x":1}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RunRecord.self, from: Data(unknown.utf8)) }
        let submitted =
            #"{"at":"2026-03-02T06:00:00Z","device":"d","kind":"submitted","lowPower":false,"platform":"ios"}"#
        do {
            _ = try JSONDecoder().decode(RunRecord.self, from: Data(submitted.utf8))
            Issue.record("decoded a submitted record without earliestBeginDate")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.last?.stringValue == "earliestBeginDate")
        } catch {
            Issue.record("\(error)")
        }
    }

    // MARK: the two semantics

    @Test("Staleness counts background runs only: a user's open refreshes the data, not the staleness")
    func stalenessIsBackgroundOnly() throws {
        var log = RefreshLog()
        log.markCompleted(at: Self.t0, success: true, lowPower: false, bucket: nil, kind: .background, duration: 1)
        log.markCompleted(
            at: Self.t0.addingTimeInterval(10 * 3_600), success: true, lowPower: false, bucket: nil, kind: .foreground,
            duration: 1)
        // A failed background run does not reset it either.
        log.markCompleted(
            at: Self.t0.addingTimeInterval(11 * 3_600), success: false, lowPower: false, bucket: nil,
            kind: .background, duration: 1)
        let now = Self.t0.addingTimeInterval(12 * 3_600)
        #expect(log.stalenessHours(at: now) == 12)
        #expect(log.dataAgeHours(at: now) == 2)
        var never = RefreshLog()
        never.markCompleted(at: Self.t0, success: true, lowPower: false, bucket: nil, kind: .foreground, duration: 1)
        #expect(never.stalenessHours(at: now) == nil)
        #expect(never.dataAgeHours(at: now) == 12)
    }

    static func iOSApp(_ mode: RegistrationMode = .early, refresh: Bool = true) -> PhoneApp {
        var app = RefreshJobTests.app(scheduler: RefreshJobTests.iOS(mode))
        if !refresh { _ = app.setBackgroundRefreshEnabled(false, at: RefreshJobTests.start) }
        return app
    }

    static func records(_ effects: [PhoneAction]) -> [RunRecord] {
        effects.compactMap { if case .record(let record) = $0 { record } else { nil } }
    }

    @Test("A run's scheduled time is the earliestBeginDate of the request it answered, not its own renewal")
    func scheduledTimeIsTheAnsweredRequest() throws {
        var app = Self.iOSApp()
        let opened = app.launch(at: RefreshJobTests.start, byUser: true)
        let submitted = try #require(Self.records(opened).first { $0.kind == .submitted })
        let requested = try #require(submitted.earliestBeginDate)
        let due = try #require(app.nextBackgroundLaunch(after: RefreshJobTests.start))
        #expect(due >= requested)
        let run = app.backgroundLaunchDue(at: due)
        let records = Self.records(run)
        let background = try #require(records.first { $0.kind == .background })
        let renewal = try #require(records.first { $0.kind == .submitted })
        #expect(background.earliestBeginDate == requested)
        #expect(renewal.earliestBeginDate.map { $0 > requested } == true, "the renewal asks for the next day")
        let history = try #require(app.state.refreshLog.history.last)
        #expect(history.kind == .background)
        #expect(history.scheduledAt == requested)
    }

    @Test("The app's records: foreground at each open with the staleness the user saw, submitted, background")
    func appRecords() throws {
        var app = Self.iOSApp()
        let first = Self.records(app.launch(at: RefreshJobTests.start, byUser: true))
        #expect(first.map(\.kind) == [.foreground, .submitted])
        #expect(first[0].stalenessHours == nil, "never refreshed in the background")
        #expect(first.allSatisfy { $0.device == "phone-0000000000000007" && $0.platform == .ios && $0.bucket == nil })
        let due = try #require(app.nextBackgroundLaunch(after: RefreshJobTests.start))
        let run = Self.records(app.backgroundLaunchDue(at: due))
        #expect(run.map(\.kind) == [.submitted, .background])
        let background = run[1]
        #expect(background.success == true && background.expired == false && background.stalenessHours == 0)
        let later = due.addingTimeInterval(5 * 3_600)
        let open = Self.records(app.launch(at: later, byUser: true))
        // The open re-states the request the run renewed (same earliestBeginDate): not a new one.
        #expect(open.map(\.kind) == [.foreground])
        let staleness = try #require(open.first { $0.kind == .foreground }?.stalenessHours)
        #expect(abs(staleness - later.timeIntervalSince(background.at) / 3_600) < 1e-3)
    }

    @Test("late-silent: the OS launch that finds no handler is a dropped record; refresh off gives submit_failed")
    func droppedAndSubmitFailed() throws {
        var app = Self.iOSApp(.lateSilent)
        _ = app.launch(at: RefreshJobTests.start, byUser: true)
        let due = try #require(app.nextBackgroundLaunch(after: RefreshJobTests.start))
        let records = Self.records(app.backgroundLaunchDue(at: due))
        #expect(records.map(\.kind) == [.dropped])
        #expect(records.first?.earliestBeginDate != nil)
        var off = Self.iOSApp(refresh: false)
        let failed = Self.records(off.launch(at: RefreshJobTests.start, byUser: true))
        #expect(failed.map(\.kind) == [.foreground, .submitFailed])
        #expect(failed.last?.reason?.isEmpty == false)
    }
}
