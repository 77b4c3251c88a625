import Testing

/// Restoration code written as public iOS apps write it for UIKit, ported with only the type
/// names mapped, saved, killed, relaunched into fresh objects and restored.
@Suite enum PortedApps {}
