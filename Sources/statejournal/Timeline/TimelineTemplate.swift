import Foundation

/// The timeline page's template, style sheet and scripts: the files in `Assets/`, embedded in the
/// executable when it is built (`.embedInCode` in Package.swift), so that writing a page reads no
/// file but the store's, and the page loads nothing from anywhere.
enum TimelineTemplate {
    /// `Assets/timeline.html`: the page, with a `{{name}}` placeholder for each thing `render`
    /// puts in.
    static let page = String(decoding: PackageResources.timeline_html, as: UTF8.self)

    /// `Assets/timeline-errors.js`, installed first, in the head: counts every error and
    /// `console.error` into `<body data-errors>` and lists them in `#errors`, so that a headless
    /// browser's DOM dump shows them.
    static let errorTrap = inline(PackageResources.timeline_errors_js)

    /// `Assets/timeline.css`, the page's style sheet: system fonts only, a light theme, one colour
    /// per epoch kind.
    static let style = inline(PackageResources.timeline_css)

    /// `Assets/timeline.js`, the page's script: reads the embedded model, draws the epochs, the store
    /// size and the lanes on canvases (only the lanes in view), and decodes states from the
    /// archive's chunks when one is clicked.
    static let script = inline(PackageResources.timeline_js)

    /// A file's text without its last line break: the template puts the line breaks around it.
    static func inline(_ bytes: [UInt8]) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// The page with each `{{name}}` of the template replaced by `values[name]`, in one pass: no
    /// value is searched for placeholders, so the store's data can contain anything.
    ///
    /// A placeholder without a value is a mistake in the template, caught by any test that writes a
    /// page.
    static func render(_ values: [String: String]) -> String {
        var page = ""
        page.reserveCapacity(values.values.reduce(Self.page.utf8.count) { $0 + $1.utf8.count })
        var rest = Self.page[...]
        while let open = rest.range(of: "{{") {
            page += rest[..<open.lowerBound]
            guard let close = rest.range(of: "}}", range: open.upperBound..<rest.endIndex) else {
                preconditionFailure("timeline.html has a {{ without its }}")
            }
            let name = String(rest[open.upperBound..<close.lowerBound])
            guard let value = values[name] else {
                preconditionFailure("nothing to put in {{\(name)}} of timeline.html")
            }
            page += value
            rest = rest[close.upperBound...]
        }
        page += rest
        return page
    }
}
