import Foundation

/// UIKit's `NSCoder` additions for geometry.
///
/// UIKit's `encode(_:forKey:)` for a `CGPoint`, a `CGSize` and a `CGRect` are Foundation's on Linux
/// (`NSCoder.encode(_ point: NSPoint, forKey:)` and siblings, `NSPoint` being `CGPoint`): they store
/// the value as the string `NSStringFromPoint` gives (`{1, 2}`), as UIKit stores it. These read
/// it back under UIKit's names. Linux differs: `CGVector`, `CGAffineTransform`, `UIEdgeInsets`,
/// `NSDirectionalEdgeInsets` and `UIOffset` have no coder methods here; encode their fields.
extension NSCoder {
    /// Decodes a point encoded with `encode(_:forKey:)`; UIKit's method.
    ///
    /// - Parameter key: The key.
    /// - Returns: The point, or `.zero` when the key is missing or holds something else.
    public func decodeCGPoint(forKey key: String) -> CGPoint { decodePoint(forKey: key) }

    /// Decodes a size encoded with `encode(_:forKey:)`; UIKit's method.
    ///
    /// - Parameter key: The key.
    /// - Returns: The size, or `.zero` when the key is missing or holds something else.
    public func decodeCGSize(forKey key: String) -> CGSize { decodeSize(forKey: key) }

    /// Decodes a rectangle encoded with `encode(_:forKey:)`; UIKit's method.
    ///
    /// - Parameter key: The key.
    /// - Returns: The rectangle, or `.zero` when the key is missing or holds something else.
    public func decodeCGRect(forKey key: String) -> CGRect { decodeRect(forKey: key) }
}
