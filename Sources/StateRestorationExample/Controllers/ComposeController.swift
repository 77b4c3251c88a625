import StateRestoration

/// A message being written.
public struct Draft: Codable, Sendable, Hashable {
    /// The recipient.
    public var to: String
    /// The subject line.
    public var subject: String
    /// The text typed so far.
    public var body: String

    /// Creates a draft.
    ///
    /// - Parameters:
    ///   - to: The recipient.
    ///   - subject: The subject line.
    ///   - body: The text.
    public init(to: String, subject: String, body: String = "") {
        self.to = to
        self.subject = subject
        self.body = body
    }
}

/// The editor of a draft, pushed on top of the stack.
public final class ComposeController: RestorableController, ControllerRestoration {
    /// The draft being edited.
    public internal(set) var draft: Draft

    /// Creates an editor.
    ///
    /// - Parameter draft: The draft to edit.
    public init(draft: Draft) { self.draft = draft }

    /// `Compose`.
    public var restorationIdentifier: String? { "Compose" }
    /// Recreates itself.
    public var restorationClass: (any ControllerRestoration.Type)? { ComposeController.self }

    /// Creates an editor with an empty draft; the saved draft is decoded next.
    public static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        ComposeController(draft: Draft(to: "", subject: ""))
    }

    /// Encodes the draft (a `Codable` value).
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(draft, forKey: "draft")
    }

    /// Decodes the draft.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        draft = try coder.decode(Draft.self, forKey: "draft")
    }
}
