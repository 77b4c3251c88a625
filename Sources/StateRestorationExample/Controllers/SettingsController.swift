import StateRestoration

/// The settings sheet, presented over the stack. It has no restoration class: the app delegate
/// creates it.
///
/// Its state is two ``Preserved`` properties: they save and restore themselves, and setting one
/// marks the sheet as changed, so it needs no coding methods and no call to invalidate it.
public final class SettingsController: RestorableController {
    /// Whether message lists show a preview line.
    @Preserved("showsPreview") public internal(set) var showsPreview = true
    /// The text size, in points.
    @Preserved("fontSize") public internal(set) var fontSize = 12

    /// Creates the sheet.
    public init() {}

    /// `Settings`.
    public var restorationIdentifier: String? { "Settings" }
}
