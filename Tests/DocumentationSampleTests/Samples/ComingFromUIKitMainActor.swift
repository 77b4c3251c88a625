// swift-format-ignore-file
// The sample of "Main-actor classes in Swift 6" in Coming from UIKit
// (StateRestoration.docc/ComingFromUIKit.md). This file imports exactly what the sample imports.
// It keeps the document's formatting, which swift-format would change.
import Observation
import StateRestoration

// sample: ComingFromUIKit.md, main-actor classes
@MainActor @Observable
final class BoardController: @MainActor RestorableController {
    var cards: [String] = []
    @ObservationIgnored @Preserved("zoom") var zoom = 1.0

    @ObservationIgnored var restorationIdentifier: String? { "Board" }
    var restorationClass: (any ControllerRestoration.Type)? { BoardRestoration.self }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try encodePreservedProperties(with: coder)
        coder.encode(cards, forKey: "cards")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        try decodePreservedProperties(with: coder)
        cards = try coder.decodeIfPresent([String].self, forKey: "cards") ?? []
    }
}

@MainActor
enum BoardRestoration: @MainActor ControllerRestoration {
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        BoardController()
    }
}
// end sample
