/// The metadata keys the manager writes on each epoch, so that tools can list the history without
/// decoding entries.
public enum EpochMetadataKey: Sendable {
    /// What the epoch is: one of the raw values of ``RestorationEpochKind``.
    public static let kind = "kind"
    /// The bundle version of the app that wrote the epoch.
    public static let bundleVersion = "bundleVersion"
    /// The interface idiom of the app that wrote the epoch.
    public static let interfaceIdiom = "interfaceIdiom"
    /// The system version when the epoch was written.
    public static let systemVersion = "systemVersion"
    /// On restoration markers: the epoch whose state the restoration restored, in decimal.
    public static let restoringEpoch = "restoringEpoch"
}

/// What an epoch written by ``RestorationManager`` is, as its ``EpochMetadataKey/kind`` says.
public enum RestorationEpochKind: String, Sendable, Hashable, CaseIterable {
    /// A preservation pass: the entries that changed.
    case preservation
    /// The app discarded its state: every path removed.
    case discard
    /// A restoration began (no entries): the crash-loop marker.
    case restorationBegan
    /// A restoration completed (no entries): the crash-loop marker that clears it.
    case restorationCompleted

    /// Whether epochs of this kind change the state (rather than only mark an event).
    public var changesState: Bool { self == .preservation || self == .discard }
}
