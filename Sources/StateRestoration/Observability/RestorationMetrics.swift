import Metrics

/// The metrics a manager reports, created once with the manager.
struct RestorationMetrics {
    /// Saved paths a restoration did not restore (`statejournal_restoration_skips`).
    let skips: Counter
    /// Catch-up passes that made the store healthy again (`statejournal_store_catch_up_passes`).
    let catchUpPasses: Counter
    /// How long each outage lasted, from the failure to the durable catch-up pass
    /// (`statejournal_store_degraded_duration`).
    let degradedDuration: Metrics.Timer
    /// Whether the store accepts saves (`statejournal_store_health`): 0 healthy, 1 degraded, 2 failed.
    let health: Gauge
    private let factory: any MetricsFactory

    init(factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        self.factory = factory
        skips = Counter(label: "statejournal_restoration_skips", factory: factory)
        catchUpPasses = Counter(label: "statejournal_store_catch_up_passes", factory: factory)
        degradedDuration = Metrics.Timer(label: "statejournal_store_degraded_duration", factory: factory)
        health = Gauge(label: "statejournal_store_health", factory: factory)
    }

    /// Counts a failed write, sync or reopen by its `errno` (`statejournal_store_faults`, dimension
    /// `errno`: `ENOSPC`, `EIO`…, or `none`).
    func recordFault(errno: Int32?) {
        Counter(label: "statejournal_store_faults", dimensions: [("errno", ErrnoName.of(errno))], factory: factory)
            .increment()
    }
}

/// The symbolic names of the `errno` values a store meets.
enum ErrnoName {
    static func of(_ code: Int32?) -> String {
        guard let code else { return "none" }
        return names[code] ?? "\(code)"
    }

    private static let names: [Int32: String] = [
        ENOSPC: "ENOSPC", EDQUOT: "EDQUOT", EIO: "EIO", EROFS: "EROFS", ENOENT: "ENOENT", ENOTDIR: "ENOTDIR",
        ESTALE: "ESTALE", ETIMEDOUT: "ETIMEDOUT", ENXIO: "ENXIO", ENODEV: "ENODEV", EBUSY: "EBUSY", EAGAIN: "EAGAIN",
        EINTR: "EINTR", EACCES: "EACCES", EPERM: "EPERM", EMFILE: "EMFILE", ENFILE: "ENFILE",
    ]
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
