import Foundation
import Logging
import Metrics

/// What a running shipper has cost since its last statistics: the start of the window, the client's
/// request counts and the generations written then.
struct ShippingStatistics: Sendable {
    /// The most lags kept per window: a window of a minute at one generation a second holds 60.
    static let maximumLags = 10_000

    var started: ContinuousClock.Instant
    var counts: S3RequestCounts
    var generations: Int

    /// The `p`-th percentile (0...1) of `sorted`, which must not be empty.
    static func percentile(_ sorted: [Int64], _ p: Double) -> Int64 {
        sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded(.up)))]
    }
}

extension ReplicationShipper {
    /// Logs at `info` and reports as metrics what shipping cost since `window` began, and returns
    /// the next window.
    ///
    /// Metrics (through the global `MetricsSystem`): `statejournal_replication_requests` (a counter
    /// per `method`: GET, PUT, HEAD, DELETE, LIST, POST), `statejournal_replication_bytes` (a counter
    /// per `direction`: sent, received), `statejournal_replication_generations` (a counter), and
    /// `statejournal_replication_lag` (a timer of each generation's newest commit to the bucket).
    func reportStatistics(since window: ShippingStatistics) -> ShippingStatistics {
        let now = ContinuousClock.now
        let counts = requestCounts
        let delta = counts.since(window.counts)
        let generations = generationsWritten - window.generations
        let lags = lagsSinceStatistics.sorted()
        lagsSinceStatistics.removeAll(keepingCapacity: true)
        let elapsed = (now - window.started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        // A window shorter than ten seconds (a short statistics interval) is shown to a tenth.
        let shown = seconds < 10 ? "\((seconds * 10).rounded() / 10)" : "\(Int(seconds.rounded()))"
        var line = "in the last \(shown) s: \(delta), \(delta.bytesSent) bytes sent, "
        line += "\(delta.bytesReceived) received, \(generations) generations"
        if !lags.isEmpty {
            line += "; newest commit to the bucket p50 \(ShippingStatistics.percentile(lags, 0.5)) ms, "
            line += "p99 \(ShippingStatistics.percentile(lags, 0.99)) ms, max \(lags.last!) ms"
        }
        if seconds > 0 {
            line += " (\(Int((Double(delta.total) * 3600 / seconds).rounded())) requests an hour at this rate)"
        }
        options.logger.info(
            "\(line)",
            metadata: [
                "store": "\(store.path)", "replica": "\(location)", "requests": "\(delta.total)",
                "puts": "\(delta.puts)", "gets": "\(delta.gets)", "lists": "\(delta.lists)", "heads": "\(delta.heads)",
                "deletes": "\(delta.deletes)", "posts": "\(delta.posts)",
            ])
        for (method, count) in [
            ("GET", delta.gets), ("PUT", delta.puts), ("HEAD", delta.heads), ("DELETE", delta.deletes),
            ("LIST", delta.lists), ("POST", delta.posts),
        ] where count > 0 {
            Counter(label: "statejournal_replication_requests", dimensions: [("method", method)]).increment(by: count)
        }
        Counter(label: "statejournal_replication_bytes", dimensions: [("direction", "sent")])
            .increment(by: Int(clamping: delta.bytesSent))
        Counter(label: "statejournal_replication_bytes", dimensions: [("direction", "received")])
            .increment(by: Int(clamping: delta.bytesReceived))
        Counter(label: "statejournal_replication_generations").increment(by: generations)
        let lag = Metrics.Timer(label: "statejournal_replication_lag")
        for milliseconds in lags { lag.recordMilliseconds(milliseconds) }
        return ShippingStatistics(started: now, counts: counts, generations: generationsWritten)
    }
}
