import Observation

/// Encodes an object; when it is `@Observable`, watches the properties its encode read, so that
/// the first change to any of them marks the object as changed (as
/// ``StateRestoring/invalidateRestorableState()`` does) without a call from the app.
///
/// Observation calls back once per registration, as the property is about to change, on the
/// thread that changes it; every encode registers again. Like every restorable object, an
/// observable one is changed on its manager's thread.
enum ObservedEncoding {
    /// - Parameter isObservable: Whether the object's type is `Observable`
    ///   (``TypeNameCache/isObservable(_:)``).
    static func encode(_ object: any StateRestoring, with coder: RestorationCoder, isObservable: Bool) throws {
        guard isObservable else {
            try object.encodeRestorableState(with: coder)
            return
        }
        let watched = WatchedObject(object)
        let outcome = withObservationTracking {
            Result { try object.encodeRestorableState(with: coder) }
        } onChange: {
            watched.invalidate()
        }
        try outcome.get()
    }
}

/// The object an observation invalidates when one of its encoded properties changes.
///
/// `@unchecked Sendable` because Observation requires a `Sendable` change handler, while the
/// handler runs on the thread that changes the object, which is its manager's thread.
private final class WatchedObject: @unchecked Sendable {
    private weak var object: (any StateRestoring)?

    init(_ object: any StateRestoring) { self.object = object }

    func invalidate() { object?.invalidateRestorableState() }
}
