// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// The one place where the simulated OS's trace becomes the phone's events (`Event.init(_:)`).
@Suite("The simulated OS's trace as the phone's events")
struct OSEventMappingTests {
    @Test("Every name the simulated OS traces is the catalogue's name of the same text, from the OS")
    func names() {
        for name in OSEventName.allCases {
            #expect(EventName(name).rawValue == name.rawValue)
            #expect(EventName(name).source(in: .phone) == .os, "\(name)")
        }
        #expect(Set(OSEventName.allCases.map { EventName($0) }).count == OSEventName.allCases.count)
    }

    @Test("An entry keeps its fields in order: the same JSON line as an Event built by hand")
    func fields() {
        let at = Date(timeIntervalSince1970: 1_760_000_000.25)
        let fields: [(String, EventValue)] = [
            ("identifier", .string("task")), ("budget", .double(30)), ("simulated", .bool(false)),
            ("earliestBeginDate", .date(at)), ("plannedLaunch", .null),
            ("reasons", .object(EventObject([("quota", .int(2))]))),
        ]
        let event = Event(OSEvent(.osLaunch, fields))
        #expect(event == Event(.osLaunch, fields))
        #expect(
            event.jsonLine(time: at, process: .phone)
                == #"{"event":"os.launch","time":"2025-10-09T08:53:20.250Z","source":"os","identifier":"task","#
                + #""budget":30.0,"simulated":false,"earliestBeginDate":"2025-10-09T08:53:20Z","plannedLaunch":null,"#
                + #""reasons":{"quota":2}}"#)
    }
}
