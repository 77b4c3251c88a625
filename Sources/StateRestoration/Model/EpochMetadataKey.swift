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
    /// On restoration markers: `1` when the restored epoch held the latest state when the marker
    /// was written (a launch), `0` when it was older (time travel or a crash-loop fallback). Tells
    /// the next launch that the marker's own epoch holds the same state, once compaction has folded
    /// the restored epoch.
    public static let restoredLatest = "restoredLatest"
    /// On `restorationBegan` markers: how many restorations of the same epoch failed in a row before
    /// this one; on `restorationHeld` and `restorationFailed` markers, how many with the one they
    /// name; so that a crash loop is still seen once compaction folded the markers before.
    public static let unfinishedAttempts = "unfinishedAttempts"
    /// On `restorationBegan` markers: a token, in hexadecimal, when the manager armed a crash note
    /// for the restoration (`Journal.armCrashNote(_:)`); on `restorationFailed` and
    /// `restorationHeld` markers, the token of the restoration they say failed. A `restorationBegan`
    /// marker with a token counts as failed only when such a marker names it; one without (written by
    /// an earlier release, or when the note could not be armed) whenever no `restorationCompleted`
    /// marker follows it.
    public static let restorationToken = "restorationToken"
    /// On `restorationFailed` markers: the crash signal the process died of during the restoration
    /// (`SIGSEGV`, `SIGILL`, `SIGTRAP`, `SIGABRT`, ...).
    public static let crashSignal = "crashSignal"
    /// On restoration markers: the bundle version that saved the restored state, so that the state
    /// keeps its saved version when it is read through the marker after compaction.
    public static let restoredBundleVersion = "restoredBundleVersion"
    /// On restoration markers: the interface idiom that saved the restored state.
    public static let restoredInterfaceIdiom = "restoredInterfaceIdiom"
    /// On `restorationCompleted` markers: what the restoration did (what was restored, what was
    /// skipped and why, its diagnostics), in the compact, versioned text encoding of
    /// ``RecordedRestorationReport``, at most ``RecordedRestorationReport/maximumEncodedSize``
    /// bytes. Markers written before this key existed have no such item.
    public static let restorationReport = "restorationReport"
    /// On the catch-up pass after the store was unavailable (see `RestorationManager.health`): when
    /// the outage began, as RFC 3339 with milliseconds in UTC, so that tools can show it (the
    /// timeline draws it as a band up to the catch-up epoch).
    public static let outageStarted = "outageStarted"
    /// On the catch-up pass after the store was unavailable: the `errno` name of the failure that
    /// began the outage, such as `EIO` or `ENOSPC`.
    public static let outageReason = "outageReason"
    /// On the epochs of a scene's passes and restoration markers: the scene's
    /// ``SceneSession/persistentIdentifier``. Epochs of the default scene (the methods without a
    /// `scene` parameter) have no such item.
    public static let scene = "scene"
    /// On a `discard` epoch that closed scenes (``RestorationManager/discardSceneSessions(_:)``): the
    /// ``SceneSession/persistentIdentifier`` of each, as a JSON array of strings in sorted order. A
    /// `discard` epoch without it discarded every scene's state.
    public static let discardedScenes = "discardedScenes"
}

/// What an epoch written by ``RestorationManager`` is, as its ``EpochMetadataKey/kind`` says.
public enum RestorationEpochKind: String, Sendable, Hashable, CaseIterable {
    /// A preservation pass: the entries that changed.
    case preservation
    /// The app discarded its state: every path removed, or, with
    /// ``EpochMetadataKey/discardedScenes``, the paths of the scenes it closed.
    case discard
    /// A restoration began (no entries): the crash-loop marker.
    case restorationBegan
    /// A restoration completed (no entries): the crash-loop marker that clears it.
    case restorationCompleted
    /// A restoration's pass returned with the restoration held open by
    /// `extendStateRestoration()`: it counts as failed unless a `restorationCompleted` marker
    /// follows.
    case restorationHeld
    /// The process died of a crash signal during a restoration, as the next launch found in the
    /// store's crash note: the restoration counts as failed.
    case restorationFailed

    /// Whether epochs of this kind change the state (rather than only mark an event).
    public var changesState: Bool { self == .preservation || self == .discard }
}
