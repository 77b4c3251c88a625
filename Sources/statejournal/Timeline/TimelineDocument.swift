import Foundation

/// Puts the model, the version archive and the template together into one self-contained HTML
/// page.
enum TimelineDocument {
    /// The page.
    static func html(model: TimelineModel, archive: VersionArchive) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(model), as: UTF8.self)
        var data = ["<script type=\"application/json\" id=\"timeline-model\">" + scriptSafe(json) + "</script>"]
        for (index, chunk) in archive.chunks.enumerated() {
            data.append(
                "<script type=\"application/octet-stream\" id=\"chunk-\(index)\" "
                    + "data-raw=\"\(archive.rawSizes[index])\">" + chunk + "</script>")
        }
        return TimelineTemplate.render([
            "store": escapeHTML(model.store),
            "timeline-errors.js": TimelineTemplate.errorTrap,
            "timeline.css": TimelineTemplate.style,
            "data": data.joined(separator: "\n"),
            "timeline.js": TimelineTemplate.script,
        ])
    }

    /// JSON that cannot end its `<script>` element early: every `<` is written `\u003c`, which
    /// is the same string to JSON.
    static func scriptSafe(_ json: String) -> String {
        json.replacingOccurrences(of: "<", with: "\\u003c")
    }

    static func escapeHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
