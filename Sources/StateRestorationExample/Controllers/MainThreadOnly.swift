// The example app's objects belong to the thread that runs the app, as UI objects do.

@available(*, unavailable, message: "The mail app's controllers belong to the thread that runs the app.")
extension MailNavigationController: Sendable {}

@available(*, unavailable, message: "The mail app's controllers belong to the thread that runs the app.")
extension MailboxesController: Sendable {}

@available(*, unavailable, message: "The mail app's controllers belong to the thread that runs the app.")
extension MessageListController: Sendable {}

@available(*, unavailable, message: "The mail app's controllers belong to the thread that runs the app.")
extension ComposeController: Sendable {}

@available(*, unavailable, message: "The mail app's controllers belong to the thread that runs the app.")
extension SettingsController: Sendable {}

@available(*, unavailable, message: "The mail app's objects belong to the thread that runs the app.")
extension MailSession: Sendable {}
