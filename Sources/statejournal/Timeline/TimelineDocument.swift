import Foundation

/// Puts the model, the version archive and the template together into one self-contained HTML
/// page.
enum TimelineDocument {
    /// The page.
    static func html(model: TimelineModel, archive: VersionArchive) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(model), as: UTF8.self)
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="statejournal timeline">
            <title>StateJournal timeline · \(escapeHTML(model.store))</title>
            <script>\(TimelineTemplate.errorTrap)</script>
            <style>\(TimelineTemplate.style)</style>
            </head>
            <body data-errors="0" data-rendered="0">

            """
        page += TimelineTemplate.body
        page += "\n<script type=\"application/json\" id=\"timeline-model\">" + scriptSafe(json) + "</script>\n"
        for (index, chunk) in archive.chunks.enumerated() {
            page +=
                "<script type=\"application/octet-stream\" id=\"chunk-\(index)\" "
                + "data-raw=\"\(archive.rawSizes[index])\">" + chunk + "</script>\n"
        }
        page += "<script>\n" + TimelineTemplate.script + "\n</script>\n</body>\n</html>\n"
        return page
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
