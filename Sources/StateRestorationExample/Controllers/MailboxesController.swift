import StateRestoration

/// The list of mailboxes, at the bottom of the stack.
public final class MailboxesController: RestorableController, ControllerRestoration {
    /// The highlighted mailbox, saved and restored by itself.
    @Preserved("highlighted") public internal(set) var highlighted: String? = nil

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
}
