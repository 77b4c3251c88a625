// swift-format-ignore-file
// Step 5 of Getting Started (StateRestoration.docc/GettingStarted.md): controllers that a
// restoration class recreates and their parent attaches. This file imports exactly what the sample
// imports. It keeps the document's formatting, which swift-format would change.
import StateRestoration

// sample: GettingStarted.md, step 5: recreate controllers that come and go
final class PageController: RestorableController, ControllerRestoration {
    let title: String
    @Preserved("scrollOffset") var scrollOffset = 0.0

    init(title: String) { self.title = title }

    var restorationIdentifier: String? { "Page-\(title)" }
    var restorationClass: (any ControllerRestoration.Type)? { PageController.self }

    // Called during restoration; its state is decoded next.
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        guard let title = try? coder.decodeString(forKey: "title") else { return nil }
        return PageController(title: title)
    }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(title, forKey: "title")
        try encodePreservedProperties(with: coder)
    }
}

final class StackController: RestorableController {
    var pages: [PageController] = []

    var restorationIdentifier: String? { "Stack" }
    var embeddedRestorationChildren: [any RestorableController] { pages }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(pages, forKey: "pages")  // references: the pages' paths, in order
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        // The pages their restoration class recreated, in their saved order.
        pages = try coder.decodeObjects(forKey: "pages").compactMap { $0 as? PageController }
    }
}
// end sample
