@_exported import Foundation
@_exported import StateRestoration

// UIKit's restoration names, on top of StateRestoration.
//
// UIKit's controllers and restoration protocols are `@MainActor`, and so are these: a main-actor
// subclass's overrides read its own state, as in UIKit. They meet the package's nonisolated
// protocols in two ways:
// - `UIViewController` conforms to `RestorableController` with an isolated conformance
//   (`@MainActor RestorableController`), so a controller becomes `any RestorableController` in
//   main-actor code only, and the passes that walk it run there;
// - the protocols' bridges (`UIStateRestoring`, `UIViewControllerRestoration`,
//   `UIObjectRestoration` to their package counterparts) are nonisolated and go through
//   `MainActorGate`, which runs main-actor code only on the main thread and refuses it elsewhere.
