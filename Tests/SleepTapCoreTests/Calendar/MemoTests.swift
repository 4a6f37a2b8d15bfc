// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// The two-generation memo behind the calendar caches, and the memoised calendar answers
/// against Foundation's.
@Suite("Memos of Foundation's answers")
struct MemoTests {
    @Test("A memo keeps at most two generations, and a key asked for again survives the roll-over")
    func generations() {
        var memo = Memo<Int, String>(generation: 3)
        for key in 0..<3 { memo.keep("\(key)", for: key) }
        #expect(memo.value(for: 0) == "0")
        memo.keep("3", for: 3)  // the first generation becomes the previous one
        #expect(memo.value(for: 1) == "1")  // found there, and kept in the current one
        for key in 4..<8 { memo.keep("\(key)", for: key) }
        #expect(memo.value(for: 2) == nil)  // two roll-overs ago, never asked again
        #expect(memo.value(for: 7) == "7")
        #expect(memo.value(for: 99) == nil)
    }

    @Test("WakeCalendar.adding and .entry give Foundation's answers: 3,000 seeded instants in six zones")
    func calendarAnswers() {
        var rng = SplitMix64(state: 0x5EED_0016)
        let zones = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Auckland"]
        for round in 0..<3_000 {
            let zone = WakeCalendar.zone(named: zones[round % zones.count])!
            let calendar = WakeCalendar.calendar(in: zone)
            // Whole minutes, so instants repeat across rounds and the memo answers many of them.
            let instant = Date(timeIntervalSince1970: 1_700_000_000 + Double(rng.next() % 50_000) * 60)
            let days = Int(rng.next() % 9)
            for _ in 0..<2 {
                #expect(
                    WakeCalendar.adding(.day, days, to: instant, in: calendar)
                        == calendar.date(byAdding: .day, value: days, to: instant))
                #expect(
                    WakeCalendar.adding(.hour, 1, to: instant, in: calendar)
                        == calendar.date(byAdding: .hour, value: 1, to: instant))
                let entry = WakeCalendar.entry(at: instant, in: zone, calendar: calendar)
                let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: instant)
                let date = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
                #expect(
                    entry.localDate == date
                        && entry.localTime == String(format: "%02d:%02d", parts.hour!, parts.minute!))
                #expect(entry.utcOffset == zone.secondsFromGMT(for: instant) && entry.wake == instant)
                #expect(entry.timeZone == zone.identifier)
            }
        }
    }
}
