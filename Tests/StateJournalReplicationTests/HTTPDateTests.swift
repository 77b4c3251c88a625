import Foundation
import Testing

@testable import StateJournalReplication

/// The dates of `Date` and `Last-Modified`, by which a standby tells a generation just written
/// from an old one: the IMF-fixdate form, and nothing else.
@Suite struct HTTPDateTests {
    @Test(arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", Int64(0)),
        ("Sun, 06 Nov 1994 08:49:37 GMT", Int64(784_111_777)),
        ("Tue, 29 Feb 2028 23:59:59 GMT", Int64(1_835_481_599)),
        ("Mon, 07 Dec 2026 18:22:07 GMT", Int64(1_796_667_727)),
    ])
    func anIMFFixdateIsReadAsTheSecondsItNames(text: String, seconds: Int64) {
        #expect(HTTPDate.seconds(text) == seconds)
    }

    @Test func everySecondOfADayAgreesWithFoundationsCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let seconds = Int64.random(in: 0..<4_102_444_800, using: &generator)
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let text = String(
                format: "Xyz, %02d %@ %04d %02d:%02d:%02d GMT", parts.day!, months[parts.month! - 1], parts.year!,
                parts.hour!, parts.minute!, parts.second!)
            #expect(HTTPDate.seconds(text) == seconds, "\(text)")
        }
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994 08:49:37", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nev 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 99999999 08:49:37 GMT",
        "Sun, -6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT extra",
    ])
    func anythingElseIsRefusedRatherThanGuessedAt(text: String) {
        #expect(HTTPDate.seconds(text) == nil)
    }
}
