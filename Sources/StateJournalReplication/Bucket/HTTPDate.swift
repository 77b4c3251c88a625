/// HTTP's dates (`Date`, `Last-Modified`): the IMF-fixdate form every S3 server sends,
/// `Sun, 06 Nov 1994 08:49:37 GMT`, read without a date formatter.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The seconds since 1970 that `text` names, or `nil` when it is not an IMF-fixdate (a server's
    /// text: anything else is refused, not guessed at).
    static func seconds(_ text: String) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int64(parts[1]), (1...31).contains(day),
            let month = months.firstIndex(of: String(parts[2])),
            parts[3].count == 4, let year = Int64(parts[3]), (1970...9999).contains(year)
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, time.allSatisfy({ $0.count == 2 }),
            let hour = Int64(time[0]), let minute = Int64(time[1]), let second = Int64(time[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        return days(year: year, month: Int64(month) + 1, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar.
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
