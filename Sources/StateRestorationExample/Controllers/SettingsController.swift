import StateRestoration

/// The settings sheet, presented over the stack. It has no restoration class: the app delegate
/// creates it.
public final class SettingsController: RestorableController {
    /// Whether message lists show a preview line.
    public internal(set) var showsPreview = true
    /// The text size, in points.
    public internal(set) var fontSize = 12

    /// Creates the sheet.
    public init() {}

    /// `Settings`.
    public var restorationIdentifier: String? { "Settings" }

    /// Encodes the preview flag and the text size.
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(showsPreview, forKey: "showsPreview")
        try coder.encode(fontSize, forKey: "fontSize")
    }

    /// Decodes the preview flag and the text size.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        showsPreview = try coder.decodeBool(forKey: "showsPreview")
        fontSize = try coder.decodeInt(forKey: "fontSize")
    }
}
