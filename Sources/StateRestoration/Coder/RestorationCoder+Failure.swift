import Foundation
import StateJournal

// How the coder fails without stopping the process: NSCoder's failWithError(_:) and the secure
// coding switch, under the `.setErrorAndReturn` policy, each failure a CoderDiagnostic.

extension RestorationCoder {
    /// An error of Foundation's coder domain, as `NSKeyedUnarchiver` reports a value it cannot
    /// code, with `message` as its debug description.
    static func invalidValue(_ message: String) -> NSError {
        NSError(
            domain: NSCocoaErrorDomain, code: CocoaError.coderInvalidValue.rawValue,
            userInfo: [NSDebugDescriptionErrorKey: message])
    }

    /// Records `error` as the coder's ``error`` (and its owner's) unless one is already set, and
    /// as a diagnostic under `key`.
    func fail(_ error: any Error, key: String? = nil) {
        if failure == nil { failure = error }
        if let owner, owner.failure == nil { owner.failure = error }
        let described = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        note(.unsupportedValue, key ?? failureKey, described ?? "coding failed: \(error)")
    }

    func setRequiresSecureCoding(_ required: Bool) {
        if required {
            secureCodingRequired = true
        } else if secureCodingRequired {
            note(
                .classNotAllowed, "",
                "requiresSecureCoding cannot be unset once set, as NSKeyedUnarchiver's cannot; it stays true")
        }
    }
}
