import StateRestoration

/// The root of the mail app: a navigation stack of screens, with settings presented on top.
///
/// A custom container in the sense of seed 002: it encodes its children itself, as references.
public final class MailNavigationController: RestorableController {
    /// The screens, bottom first.
    public internal(set) var stack: [any RestorableController] = []
    /// The settings sheet, when shown.
    public internal(set) var presentedSettings: SettingsController?

    /// Creates an empty navigation stack.
    public init() {}

    /// `Main`.
    public var restorationIdentifier: String? { "Main" }
    /// The stack, bottom first.
    public var embeddedRestorationChildren: [any RestorableController] { stack }
    /// The settings sheet.
    public var presentedRestorationController: (any RestorableController)? { presentedSettings }

    /// Encodes the stack and the presented sheet as references.
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(stack, forKey: "stack")
        coder.encode(presentedSettings, forKey: "presented")
    }

    /// Rebuilds the stack from the restored screens, leaving out those not restored.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        stack = try coder.decodeObjects(forKey: "stack").compactMap { $0 as? any RestorableController }
        presentedSettings = coder.decodeObject(of: SettingsController.self, forKey: "presented")
    }
}
