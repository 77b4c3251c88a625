// swift-format-ignore-file
// The README's porting sample ("Porting UIKit code"). This file imports exactly what the sample
// imports, so that the sample compiles with its own imports and no others.
import UIKitRestoration

// sample: README.md, porting UIKit code
final class ThreadListController: UIViewController, UIViewControllerRestoration {
    var scrollOffset = 0.0

    static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        ThreadListController(restorationIdentifier: identifierComponents.last)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(scrollOffset, forKey: "scrollOffset")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        scrollOffset = coder.decodeDouble(forKey: "scrollOffset")
    }
}
// end sample
