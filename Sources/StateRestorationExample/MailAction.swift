/// One thing a user does in the mail app, for driving it deterministically.
public enum MailAction: Sendable, Hashable, CustomStringConvertible {
    /// Highlights a mailbox and pushes its message list (replacing screens above the mailboxes).
    case openMailbox(String)
    /// Selects a message in the top message list.
    case selectMessage(Int)
    /// Scrolls the top message list.
    case scroll(to: Double)
    /// Pops the top screen (never the mailboxes).
    case back
    /// Pushes an editor with a new draft.
    case compose(to: String, subject: String)
    /// Appends text to the draft of the top editor.
    case type(String)
    /// Presents the settings sheet.
    case openSettings
    /// Changes the text size in the settings sheet.
    case setFontSize(Int)
    /// Turns the preview line on or off in the settings sheet.
    case setPreview(Bool)
    /// Dismisses the settings sheet.
    case closeSettings
    /// Flips the session's unread-only filter.
    case toggleUnreadOnly

    /// The action in words, as a demo prints it.
    public var description: String {
        switch self {
        case .openMailbox(let name): "open mailbox \(name)"
        case .selectMessage(let id): "select message \(id)"
        case .scroll(let offset): "scroll to \(offset)"
        case .back: "back"
        case .compose(let to, let subject): "compose to \(to): \(subject)"
        case .type(let text): "type \"\(text)\""
        case .openSettings: "open settings"
        case .setFontSize(let size): "set font size \(size)"
        case .setPreview(let on): "set preview \(on ? "on" : "off")"
        case .closeSettings: "close settings"
        case .toggleUnreadOnly: "toggle unread only"
        }
    }
}
