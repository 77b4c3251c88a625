/// What the mail app shows, in a form tests and demos can compare and print.
public struct MailSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The restoration identifiers of the stack, bottom first.
    public var stack: [String]
    /// The highlighted mailbox.
    public var highlightedMailbox: String?
    /// The mailbox of the top message list.
    public var mailbox: String?
    /// The selected message in the top message list.
    public var selectedMessageID: Int?
    /// The scroll position of the top message list.
    public var scrollOffset: Double?
    /// The draft of the top editor.
    public var draft: Draft?
    /// The settings, when the sheet is presented: preview flag and text size.
    public var settings: Settings?
    /// The session's account.
    public var account: String
    /// The session's filter.
    public var unreadOnly: Bool

    /// The settings sheet's values.
    public struct Settings: Sendable, Hashable {
        /// Whether lists show a preview line.
        public var showsPreview: Bool
        /// The text size.
        public var fontSize: Int
    }

    /// The screen in a few lines, as a demo prints it.
    public var description: String {
        var lines = ["stack: " + (stack.isEmpty ? "(empty)" : stack.joined(separator: " > "))]
        if let mailbox {
            lines.append(
                """
                list: \(mailbox), selection \(selectedMessageID.map(String.init) ?? "none"), scrolled to \
                \(scrollOffset ?? 0)
                """
            )
        }
        if let draft { lines.append("draft to \(draft.to): \(draft.subject) — \"\(draft.body)\"") }
        if let settings {
            lines.append("settings: preview \(settings.showsPreview ? "on" : "off"), font \(settings.fontSize)")
        }
        lines.append("session: \(account)\(unreadOnly ? ", unread only" : "")")
        return lines.joined(separator: "\n")
    }
}
