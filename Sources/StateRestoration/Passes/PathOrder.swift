import StateJournal

/// Sorting restoration paths quickly, parents before their descendants.
///
/// `RestorationPath`'s own `<` compares component by component through UTF-8 views, which is slow
/// for large sorts. Joining the components with U+0000 gives a string whose order is the same
/// component-wise order for components without U+0000, and Swift compares such strings quickly.
enum PathOrder {
    static func sorted<S: Sequence<RestorationPath>>(_ paths: S) -> [RestorationPath] {
        paths.map { ($0.components.joined(separator: "\u{0}"), $0) }
            .sorted { $0.0 < $1.0 }
            .map(\.1)
    }
}
