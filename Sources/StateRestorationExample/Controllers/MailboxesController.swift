import StateRestoration

/// The list of mailboxes, at the bottom of the stack.
public final class MailboxesController: RestorableController, ControllerRestoration {
    /// The highlighted mailbox.
    public internal(set) var highlighted: String?

    /// Creates the screen.
    public init() {}

    /// `Mailboxes`.
    public var restorationIdentifier: String? { "Mailboxes" }
    /// Recreates itself.
    public var restorationClass: (any ControllerRestoration.Type)? { MailboxesController.self }

    /// Creates a new mailbox list.
    public static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        MailboxesController()
    }

    /// Encodes the highlighted mailbox.
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        if let highlighted { try coder.encode(highlighted, forKey: "highlighted") }
    }

    /// Decodes the highlighted mailbox.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        highlighted = coder.containsValue(forKey: "highlighted") ? try coder.decodeString(forKey: "highlighted") : nil
    }
}
