import Foundation

/// UIKit's additions to `IndexPath` for tables and collections: an index path of two indexes, a
/// section and a row (or item).
extension IndexPath {
    /// An index path of a row in a section; UIKit's initializer.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - section: The section.
    public init(row: Int, section: Int) { self.init(indexes: [section, row]) }

    /// An index path of an item in a section; UIKit's initializer.
    ///
    /// - Parameters:
    ///   - item: The item.
    ///   - section: The section.
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }

    /// The section: the first index; UIKit's property.
    ///
    /// Linux differs: where UIKit traps on an index path without that index (one decoded from
    /// damaged or hostile saved state, say), this reads `NSNotFound`, and setting it pads the path
    /// with zeros.
    public var section: Int {
        get { index(at: 0) }
        set { setIndex(newValue, at: 0) }
    }

    /// The row: the second index; UIKit's property. Without it, as ``section``.
    public var row: Int {
        get { index(at: 1) }
        set { setIndex(newValue, at: 1) }
    }

    /// The item: the second index; UIKit's property, as ``row``.
    public var item: Int {
        get { index(at: 1) }
        set { setIndex(newValue, at: 1) }
    }

    private func index(at position: Int) -> Int { position < count ? self[position] : NSNotFound }

    private mutating func setIndex(_ value: Int, at position: Int) {
        while count <= position { append(0) }
        self[position] = value
    }
}
