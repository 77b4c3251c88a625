import Foundation
import StateRestoration

/// The way from the package's nonisolated requirements into main-actor code.
///
/// The package's passes call ``StateRestoring`` and ``ControllerRestoration`` requirements on the
/// thread that runs the pass. UIKit's types are `@MainActor`, so where a nonisolated requirement
/// forwards to one of them, the call runs only when the pass is on the main thread (where the main
/// actor runs); anywhere else it is refused with a ``RestorationError`` coded
/// ``RestorationError/Code/notOnMainActor``, never run off the actor and never a trap.
///
/// The main actor runs on the main thread, or, once the main thread has handed itself to Dispatch
/// (`dispatchMain()`, an async `main`, a test runner), on whichever thread drains the main queue:
/// both count, the second recognised by a value set on the main queue.
enum MainActorGate {
    /// Marks the main queue, so that code the main queue runs on another thread is recognised.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the caller runs where the main actor runs: on the main thread or on the main queue.
    static var isOnMainActor: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }

    /// Runs `body` on the main actor when the caller is on the main thread.
    ///
    /// - Parameter body: The main-actor work.
    /// - Returns: What `body` returns, or `nil` off the main thread.
    static func ifOnMainActor<T>(_ body: @MainActor () throws -> T) rethrows -> T? {
        guard isOnMainActor else { return nil }
        // The result crosses out of the closure on the same thread, the main one.
        nonisolated(unsafe) var result: T?
        try MainActor.assumeIsolated { result = try body() }
        return result
    }

    /// Runs `body` on the main actor, or throws when the caller is not on the main thread.
    ///
    /// - Parameters:
    ///   - what: What the pass was doing, for the error's message.
    ///   - body: The main-actor work.
    /// - Returns: What `body` returns.
    /// - Throws: ``RestorationError/Code/notOnMainActor`` off the main thread; what `body` throws.
    static func onMainActor<T>(_ what: String, _ body: @MainActor () throws -> T) throws -> T {
        guard let result = try ifOnMainActor(body) else { throw refusal(what) }
        return result
    }

    /// The error for a main-actor call refused off the main thread.
    ///
    /// - Parameter what: What the pass was doing.
    /// - Returns: The error.
    static func refusal(_ what: String) -> RestorationError {
        RestorationError(
            .notOnMainActor,
            "\(what) needs the main actor, and the pass ran on another thread, so nothing was run: run the "
                + "passes that reach UIKitRestoration's controllers and objects on the main actor (from main-actor "
                + "code, or through StateRestorationService, whose encode step runs there)")
    }
}
