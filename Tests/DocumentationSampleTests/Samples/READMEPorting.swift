// swift-format-ignore-file
// The README's porting sample ("Porting UIKit code"). This file imports exactly what the sample
// imports, so that the sample compiles with its own imports and no others.
import Foundation
import StateRestoration

// sample: README.md, porting UIKit code
class ThreadListController: RestorableViewController {
    var scrollOffset = 0.0

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
