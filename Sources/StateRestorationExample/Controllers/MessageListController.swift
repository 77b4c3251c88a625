import StateRestoration

/// The messages of one mailbox, with a selection and a scroll position.
public final class MessageListController: RestorableController, ControllerRestoration {
    /// The mailbox shown.
    public let mailbox: String
    /// The selected message's identifier.
    public internal(set) var selectedMessageID: Int?
    /// How far the list is scrolled, in rows.
    public internal(set) var scrollOffset: Double = 0

    /// Creates the list of a mailbox.
    ///
    /// - Parameter mailbox: The mailbox's name.
    public init(mailbox: String) { self.mailbox = mailbox }

    /// `Messages`.
    public var restorationIdentifier: String? { "Messages" }
    /// Recreates itself from the saved mailbox name.
    public var restorationClass: (any ControllerRestoration.Type)? { MessageListController.self }

    /// Creates the list of the saved mailbox, or nothing when the state does not name one.
    public static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        guard let mailbox = try? coder.decodeString(forKey: "mailbox") else { return nil }
        return MessageListController(mailbox: mailbox)
    }

    /// Encodes the mailbox, the selection and the scroll position.
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(mailbox, forKey: "mailbox")
        if let selectedMessageID { coder.encode(selectedMessageID, forKey: "selection") }
        coder.encode(scrollOffset, forKey: "scrollOffset")
    }

    /// Decodes the selection and the scroll position.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        selectedMessageID = try coder.decodeIfPresent(Int.self, forKey: "selection")
        scrollOffset = try coder.decode(forKey: "scrollOffset", default: 0)
    }
}
