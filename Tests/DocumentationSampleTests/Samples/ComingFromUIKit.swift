// swift-format-ignore-file
// The samples of "Missing keys, invalidation and preserved properties" in Coming from UIKit
// (StateRestoration.docc/ComingFromUIKit.md). This file imports exactly what the samples import.
// It keeps the document's formatting, which swift-format would change.
import StateRestoration

// sample: ComingFromUIKit.md, missing keys and invalidation
final class InboxController: RestorableController {
    var restorationIdentifier: String? { "Inbox" }
    var unreadOnly = false
    var pageSize = 50
    var selectedMessage: String?

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(unreadOnly, forKey: "unreadOnly")
        coder.encode(pageSize, forKey: "pageSize")
        if let selectedMessage { coder.encode(selectedMessage, forKey: "selectedMessage") }
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        unreadOnly = coder.decodeBool(forKey: "unreadOnly")
        pageSize = try coder.decode(forKey: "pageSize", default: 50)  // added in version 2
        selectedMessage = try coder.decodeIfPresent(String.self, forKey: "selectedMessage")
    }

    func select(_ message: String) {
        selectedMessage = message
        invalidateRestorableState()  // no manager reference needed
    }
}
// end sample

// sample: ComingFromUIKit.md, preserved properties
final class PreservedInboxController: RestorableController {
    var restorationIdentifier: String? { "Inbox" }
    @Preserved("unreadOnly") var unreadOnly = false
    @Preserved("pageSize") var pageSize = 50
    @Preserved("selectedMessage") var selectedMessage: String? = nil
}
// end sample
