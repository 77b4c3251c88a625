import Metrics

/// The metrics a manager reports, created once with the manager.
struct RestorationMetrics {
    /// Saved paths a restoration did not restore (`statejournal_restoration_skips`).
    let skips: Counter

    init(factory: (any MetricsFactory)?) {
        skips = Counter(label: "statejournal_restoration_skips", factory: factory ?? MetricsSystem.factory)
    }
}
