import CLZ4
import Foundation
import StateJournal

/// Every state the retained epochs wrote, rendered as `show` prints it, in chunks of about 64 KiB
/// that are LZ4-block compressed and base64 encoded: the page decodes a chunk only when one of its
/// states is clicked.
///
/// Versions are ordered by path (the tree's pre-order), then by epoch, so that a chunk holds
/// successive versions of neighbouring paths, which compress well. Each version is one record,
/// records are separated by U+001E (JSON text escapes it, so it never occurs inside one):
///
/// - `r` TYPE TAB JSON: a restoration entry, its type and its values as compact JSON;
/// - `o` TEXT: other bytes as `show` prints them (JSON, text or base64);
/// - `c` LENGTH TAB TEXT: a rendering longer than ``maximumVersionLength``, cut;
/// - `-`: left out, because the states of newer epochs filled the budget first.
struct VersionArchive {
    /// The longest rendering embedded whole.
    static let maximumVersionLength = 64 << 10
    /// The uncompressed size a chunk is closed at.
    static let chunkSize = 64 << 10

    /// Compressed, base64-encoded chunks.
    var chunks: [String] = []
    /// Each chunk's uncompressed size.
    var rawSizes: [Int] = []
    var summary = TimelineModel.ArchiveSummary(versions: 0, omitted: 0, chunkStarts: [0], rawBytes: 0)

    /// Builds the path tree and the archive from each path's changes, in epoch order (`nil` for a
    /// removal).
    static func build(
        _ perPath: [RestorationPath: [(row: Int, state: [UInt8]?)]], rows: Int, budget: Int
    ) -> (TimelineModel.Paths, VersionArchive) {
        var paths = TimelineModel.Paths()
        var versions: [(row: Int, state: [UInt8])] = []
        var stack: [(path: RestorationPath, node: Int)] = []
        func close(above depth: Int) {
            while let top = stack.last, top.path.components.count > depth {
                paths.end[top.node] = paths.name.count
                stack.removeLast()
            }
        }
        func addNode(_ path: RestorationPath, events: [(row: Int, state: [UInt8]?)]) {
            let node = paths.name.count
            paths.name.append(path.components.last ?? "")
            paths.depth.append(path.components.count - 1)
            paths.end.append(node + 1)
            paths.firstVersion.append(versions.count)
            for event in events {
                paths.events.append(event.row * 2 + (event.state == nil ? 1 : 0))
                if let state = event.state { versions.append((event.row, state)) }
            }
            paths.start.append(paths.events.count)
            stack.append((path, node))
        }
        for path in perPath.keys.sorted() {
            // Close the nodes that are not ancestors of this path, then add the missing ancestors.
            while let top = stack.last, !path.hasPrefix(top.path) || top.path == path {
                paths.end[top.node] = paths.name.count
                stack.removeLast()
            }
            for depth in (stack.last?.path.components.count ?? 0) + 1..<path.components.count {
                addNode(RestorationPath(Array(path.components.prefix(depth))), events: [])
            }
            addNode(path, events: perPath[path]!)
        }
        close(above: 0)

        var archive = VersionArchive()
        archive.summary.versions = versions.count
        var records = [String?](repeating: nil, count: versions.count)
        var spent = 0
        for index in versions.indices.sorted(by: { versions[$0].row > versions[$1].row }) {
            guard spent < budget else { break }
            let record = render(versions[index].state)
            spent += record.utf8.count
            records[index] = record
        }
        var chunk = ""
        func flush(upTo end: Int) {
            guard !chunk.isEmpty || end > archive.summary.chunkStarts.last! else { return }
            let raw = Array(chunk.utf8)
            archive.rawSizes.append(raw.count)
            archive.summary.rawBytes += raw.count
            archive.chunks.append(Data(compress(raw)).base64EncodedString())
            archive.summary.chunkStarts.append(end)
            chunk = ""
        }
        for index in records.indices {
            if index > archive.summary.chunkStarts.last! { chunk += "\u{1E}" }
            if let record = records[index] {
                chunk += record
            } else {
                chunk += "-"
                archive.summary.omitted += 1
            }
            if chunk.utf8.count >= chunkSize { flush(upTo: index + 1) }
        }
        flush(upTo: records.count)
        return (paths, archive)
    }

    /// One version's record.
    static func render(_ bytes: [UInt8]) -> String {
        let object = ValueRendering.object(bytes)
        let json = object.state.compactText
        let plain = object.type == "json" || object.type == "text" || object.type == "bytes"
        let record = plain ? "o" + json : "r" + object.type + "\t" + json
        guard record.utf8.count > maximumVersionLength else { return record }
        let shown = String(decoding: Array(record.utf8.prefix(maximumVersionLength)), as: UTF8.self)
        return "c\(record.utf8.count - 1)\t" + shown.dropFirst()
    }

    /// LZ4 block compression of `input` (liblz4's default level).
    static func compress(_ input: [UInt8]) -> [UInt8] {
        guard !input.isEmpty else { return [] }
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let count = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                source.withMemoryRebound(to: CChar.self) { source in
                    target.withMemoryRebound(to: CChar.self) { target in
                        LZ4_compress_default(source.baseAddress, target.baseAddress, Int32(input.count), Int32(bound))
                    }
                }
            }
        }
        precondition(count > 0, "liblz4 could not compress \(input.count) bytes")
        return Array(output.prefix(Int(count)))
    }
}
