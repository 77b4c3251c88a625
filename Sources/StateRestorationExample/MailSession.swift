import Foundation
import StateRestoration

/// The signed-in account and the list filter: a custom restorable object registered at launch
/// under the navigation controller (path `Main/Session`).
public final class MailSession: StateRestoring {
    /// The account's address.
    public internal(set) var account: String
    /// Whether lists show unread messages only.
    public internal(set) var unreadOnly = false
    /// The scope of the session's restoration identifier.
    public weak var parent: MailNavigationController?
    /// How many times the finish pass ran on this object (it runs once per restoration).
    public private(set) var finishedRestorations = 0

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - account: The account's address.
    ///   - parent: The navigation controller that scopes it.
    public init(account: String, parent: MailNavigationController) {
        self.account = account
        self.parent = parent
    }

    /// The navigation controller.
    public var restorationParent: (any StateRestoring)? { parent }

    /// Encodes the account and the filter.
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(account, forKey: "account")
        coder.encode(unreadOnly, forKey: "unreadOnly")
    }

    /// Decodes the account and the filter.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        account = try coder.decodeString(forKey: "account")
        unreadOnly = coder.decodeBool(forKey: "unreadOnly")
    }

    /// Counts finished restorations.
    public func applicationFinishedRestoringState() { finishedRestorations += 1 }
}
