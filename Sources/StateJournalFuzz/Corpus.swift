import Foundation
import StateJournal
import StateRestoration
import StateRestorationExample

/// The seed corpus: inputs for each harness taken from real stores.
enum Corpus {
    /// `Tests/Fuzz/Corpus` in the source tree.
    static let defaultDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/Fuzz/Corpus")

    /// Inputs are kept below this size, libFuzzer's `-max_len` in `.ci/fuzz`.
    static let maximumInputSize = 1 << 16

    /// The files of a corpus directory, sorted by name.
    static func inputs(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appendingPathComponent($0) }
    }

    /// Writes seeds for every target into `directory` from the stores at `stores` and from a store
    /// the example mail app writes in memory.
    static func make(in directory: URL, from stores: [URL]) throws -> [FuzzTarget: Int] {
        var seeds: [FuzzTarget: Set<[UInt8]>] = [:]
        func add(_ target: FuzzTarget, _ input: [UInt8]) {
            guard input.count <= maximumInputSize else { return }
            seeds[target, default: []].insert(input)
        }
        var storeFiles: [[String: [UInt8]]] = []
        for store in stores {
            var files: [String: [UInt8]] = [:]
            for name in (try FileManager.default.contentsOfDirectory(atPath: store.path)) {
                files[name] = Array(try Data(contentsOf: store.appendingPathComponent(name)))
            }
            storeFiles.append(files)
        }
        let (mailFiles, entries) = try mailStore()
        storeFiles.append(mailFiles)
        storeFiles.append(Template.shared.files)
        for entry in entries { add(.entry, entry) }

        for files in storeFiles {
            for (name, bytes) in files {
                if name == "MANIFEST" {
                    add(.manifest, [0] + bytes)
                    add(.manifest, [1] + bytes.dropLast(4))
                } else if name.hasPrefix("segment-") {
                    add(.segment, [0] + bytes.prefix(maximumInputSize - 1))
                    let version = bytes.littleEndian(UInt16.self, at: 4) ?? 1
                    add(.segment, [version >= 3 ? 3 : 1] + framedChunks(ofSegment: bytes))
                } else if name.hasPrefix("checkpoint-") {
                    add(.checkpoint, [0] + bytes)
                    if let content = FuzzLZ4Frame.decompress(bytes), content.count >= 4 {
                        add(.checkpoint, [1] + content.dropLast(4))
                    }
                }
            }
        }
        var counts: [FuzzTarget: Int] = [:]
        for target in FuzzTarget.allCases {
            let folder = directory.appendingPathComponent(target.rawValue)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for input in seeds[target] ?? [] {
                try Data(input).write(to: folder.appendingPathComponent(name(of: input)))
            }
            counts[target] = seeds[target]?.count ?? 0
        }
        return counts
    }

    /// A segment's records as the segment harness's framed chunks, up to the input size limit.
    static func framedChunks(ofSegment segment: [UInt8]) -> [UInt8] {
        var chunks: [UInt8] = []
        var offset = 44
        let version = segment.littleEndian(UInt16.self, at: 4) ?? 1
        while offset < segment.count,
            let header = segment[offset...].withUnsafeBytes({ RecordFraming.header($0, version: version) }),
            offset + header.size + header.length <= segment.count,
            header.length <= UInt16.max, chunks.count + 3 + header.length <= maximumInputSize - 1
        {
            chunks.append(header.typeByte &- 1)
            chunks.appendLittleEndian(UInt16(header.length))
            chunks += segment[(offset + header.size)..<(offset + header.size + header.length)]
            offset += header.size + header.length
        }
        return chunks
    }

    /// The files of a store the mail app wrote over a few dozen saves with a compaction midway, and
    /// every entry value it wrote.
    static func mailStore() throws -> (files: [String: [UInt8]], entries: [[UInt8]]) {
        let fileSystem = MemoryFileSystem(directories: ["/"])
        var options = JournalOptions(durability: .none, segmentSizeLimit: 16 << 10)
        options.newStoreID = { Harness.storeID }
        let journal = try Journal.open(path: Harness.storePath, options: options, fileSystem: fileSystem)
        let app = MailApp(journal: journal)
        for save in 0..<40 {
            app.simulate(steps: 3, seed: UInt64(save))
            try app.save(mode: save % 10 == 0 ? .full : .incremental)
            if save == 20 { _ = try journal.compact() }
        }
        var entries: [[UInt8]] = []
        try journal.forEachEpoch { _, changes in
            for case .put(_, let state) in changes { entries.append(state) }
            return true
        }
        try journal.close()
        var files: [String: [UInt8]] = [:]
        for (path, bytes) in fileSystem.files where path.hasPrefix(Harness.storePath + "/") {
            files[String(path.dropFirst(Harness.storePath.count + 1))] = bytes
        }
        return (files, entries)
    }

    /// A name from the input's FNV-1a hash.
    static func name(of input: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in input { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return "seed-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
