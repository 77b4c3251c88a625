import Foundation
import StateJournal
import StateJournalReplication
import StateRestoration

/// What one fuzz input is fed to. Selected by `STATEJOURNAL_FUZZ_TARGET` under libFuzzer, and by
/// the corpus directory's name when the corpus is replayed.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// A segment file: the record reader, epoch assembly, batch and commit decoding, replay,
    /// inspection, and a writer's recovery.
    case segment
    /// The bytes of one entry, as `RestorableEntry(decoding:)` reads them.
    case entry
    /// A checkpoint file: the LZ4 frame and the checkpoint content.
    case checkpoint
    /// The manifest.
    case manifest
    /// A replica's generation document and object envelopes, as a restore reads them from a
    /// bucket: the generation decoder, its validation and the restore plan, and the envelope.
    case replica
}

/// The harnesses. Each returns normally for every input: errors are expected, crashes, hangs and
/// huge allocations are bugs.
///
/// Inputs of the store harnesses start with a mode byte. An even byte feeds the rest of the input as
/// the file's bytes, as they are. An odd byte frames the rest so that checksums pass: segment records
/// get valid CRC-32C headers, a manifest gets its trailing CRC-32C, and checkpoint content gets its
/// CRC-32C and a valid LZ4 frame with a content checksum. The decoders behind the checksums then see
/// the fuzzer's bytes.
enum Harness {
    static let storePath = "/store"
    static let storeID: [UInt8] = Array(0x51...0x60)

    static func run(_ target: FuzzTarget, _ input: [UInt8]) {
        switch target {
        case .segment: segment(input)
        case .entry: entry(input)
        case .checkpoint: checkpoint(input)
        case .manifest: manifest(input)
        case .replica: replica(input)
        }
    }

    // MARK: - Harnesses

    /// Framed mode: after the mode byte, a sequence of `type: u8 | length: u16 | payload` chunks, each
    /// written as one record with a valid checksum behind a valid segment header. When bit 1 of the
    /// mode is clear, the segment is of format version 1 and the type byte is taken modulo 3 onto its
    /// three record types; when it is set, the segment is of version 3 (varint record lengths) and
    /// the type byte is taken modulo 4, so that compact commits and their patches are decoded too.
    static func segment(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        var segment: [UInt8]
        if mode & 1 == 0 {
            segment = rest
        } else {
            let version: UInt16 = mode & 2 == 0 ? 1 : 3
            segment = segmentHeader(sequence: 1, baseEpoch: 0, version: version)
            var position = 0
            while position < rest.count {
                let type = 1 + rest[position] % (version == 1 ? 3 : 4)
                let declared = Int(rest.littleEndian(UInt16.self, at: position + 1) ?? 0)
                let start = min(position + 3, rest.count)
                let end = min(start + declared, rest.count)
                segment += frameRecord(type: type, payload: Array(rest[start..<end]), version: version)
                position = end
            }
        }
        let files = [
            "MANIFEST": manifestBytes(nextFileSequence: 2, checkpoints: [], segments: [1]),
            "segment-0000000000000001.sjl": segment,
        ]
        exercise(store(files))
    }

    static func manifest(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        var manifest = Array(input.dropFirst())
        if mode & 1 == 1 {
            patch(&manifest, at: 8, with: storeID)
            manifest.appendLittleEndian(FuzzCRC32C.checksum(manifest))
        }
        var files = Template.shared.files
        files["MANIFEST"] = manifest
        exercise(store(files))
    }

    static func checkpoint(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let template = Template.shared
        var checkpoint = Array(input.dropFirst())
        if mode & 1 == 1 {
            // The content is made to belong to the template's store and position, so that the state it
            // holds is replayed, not only decoded.
            patch(&checkpoint, at: 8, with: storeID)
            var position: [UInt8] = []
            position.appendLittleEndian(template.checkpointSequence)
            position.appendLittleEndian(template.checkpointEpoch)
            patch(&checkpoint, at: 24, with: position)
            checkpoint.appendLittleEndian(FuzzCRC32C.checksum(checkpoint))
            checkpoint = FuzzLZ4Frame.compress(checkpoint)
        }
        var files = template.files
        files[template.checkpointName] = checkpoint
        let fileSystem = store(files)
        // The check a restore makes a window at a time, without holding the state, must find a
        // checkpoint damaged exactly when loading it whole does.
        let loaded = StoreInspector.verifyOnce(path: storePath, fileSystem: fileSystem, decoding: true)
        let checked = StoreInspector.verifyOnce(path: storePath, fileSystem: fileSystem, decoding: false)
        guard loaded.damagedCheckpoints.map(\.file) == checked.damagedCheckpoints.map(\.file) else {
            let found = (loaded.damagedCheckpoints, checked.damagedCheckpoints)
            fatalError("loading finds \(found.0) and the streaming check \(found.1): \(input)")
        }
        exercise(fileSystem)
    }

    static func entry(_ input: [UInt8]) {
        guard let entry = try? RestorableEntry(decoding: input) else { return }
        _ = entry.jsonText()
        _ = entry.jsonText(pretty: true)
        // What decodes must encode to bytes that decode to the same bytes again.
        let encoded = entry.encoded
        guard let again = try? RestorableEntry(decoding: encoded) else {
            fatalError("an entry that decoded does not decode after encoding: \(input)")
        }
        guard again.encoded == encoded else { fatalError("an entry changes when encoded twice: \(input)") }
    }

    // MARK: - Reading a store

    /// Every read path over the store, in both recovery modes, then a writer's recovery.
    static func exercise(_ fileSystem: MemoryFileSystem) {
        for recovery in [RecoveryMode.stopAtDamage, .strict] {
            guard let reader = try? JournalReader(path: storePath, recovery: recovery, fileSystem: fileSystem) else {
                continue
            }
            let history = (try? reader.history()) ?? []
            let state = try? reader.state()
            var changes = 0
            try? reader.forEachEpoch { _, epochChanges in
                changes += epochChanges.count
                return true
            }
            if let first = history.first, let last = history.last {
                _ = try? reader.state(through: first.epoch)
                let inspector = StoreInspector(reader: reader)
                _ = try? inspector.difference(from: first.epoch, to: last.epoch)
                if let path = state?.entries.keys.min() { _ = try? inspector.history(of: path) }
            }
            if let state {
                for (path, value) in state.prefix(64) {
                    _ = state[path]
                    _ = try? RestorableEntry(decoding: value)
                }
            }
        }
        var options = JournalOptions(durability: .none)
        options.newStoreID = { Harness.storeID }
        options.clock = { Date(timeIntervalSince1970: 1_800_000_000) }
        if let journal = try? Journal.open(path: storePath, options: options, fileSystem: fileSystem) {
            _ = journal.recoveredState
            try? journal.close()
        }
    }

    static func store(_ files: [String: [UInt8]]) -> MemoryFileSystem {
        var paths: [String: [UInt8]] = [:]
        for (name, bytes) in files { paths[storePath + "/" + name] = bytes }
        return MemoryFileSystem(files: paths, directories: ["/", storePath])
    }

    // MARK: - Building files

    static func patch(_ bytes: inout [UInt8], at offset: Int, with replacement: [UInt8]) {
        for (index, byte) in replacement.enumerated() where offset + index < bytes.count {
            bytes[offset + index] = byte
        }
    }

    /// A record as a segment of format `version` frames it: a `u32` length before version 3, a
    /// varint from it on.
    static func frameRecord(type: UInt8, payload: [UInt8], version: UInt16) -> [UInt8] {
        var covered: [UInt8] = []
        if version >= 3 {
            var length = payload.count
            while length >= 0x80 {
                covered.append(UInt8(length & 0x7F) | 0x80)
                length >>= 7
            }
            covered.append(UInt8(length))
        } else {
            covered.appendLittleEndian(UInt32(payload.count))
        }
        covered.append(type)
        covered += payload
        var record: [UInt8] = []
        record.appendLittleEndian(FuzzCRC32C.checksum(covered))
        return record + covered
    }

    static func segmentHeader(sequence: UInt64, baseEpoch: UInt64, version: UInt16) -> [UInt8] {
        var header = Array("SJSG".utf8)
        header.appendLittleEndian(version)
        header.appendLittleEndian(UInt16(0))
        header += storeID
        header.appendLittleEndian(sequence)
        header.appendLittleEndian(baseEpoch)
        header.appendLittleEndian(FuzzCRC32C.checksum(header))
        return header
    }

    static func manifestBytes(
        nextFileSequence: UInt64, checkpoints: [(sequence: UInt64, epoch: UInt64)], segments: [UInt64]
    ) -> [UInt8] {
        var manifest = Array("SJMF".utf8)
        manifest.appendLittleEndian(UInt16(1))
        manifest.appendLittleEndian(UInt16(0))
        manifest += storeID
        manifest.appendLittleEndian(UInt64(1))
        manifest.appendLittleEndian(nextFileSequence)
        manifest.appendLittleEndian(checkpoints.last?.epoch ?? 0)
        manifest.appendLittleEndian(UInt32(checkpoints.count))
        for checkpoint in checkpoints {
            manifest.appendLittleEndian(checkpoint.sequence)
            manifest.appendLittleEndian(checkpoint.epoch)
            manifest.appendLittleEndian(UInt64(1_800_000_000_000))
        }
        manifest.appendLittleEndian(UInt32(segments.count))
        for segment in segments { manifest.appendLittleEndian(segment) }
        manifest.appendLittleEndian(FuzzCRC32C.checksum(manifest))
        return manifest
    }
}

/// A small real store, written by the engine into memory once: a checkpoint, segments before and
/// after it. The manifest and checkpoint harnesses replace one of its files.
struct Template: Sendable {
    var files: [String: [UInt8]]
    var checkpointName: String
    var checkpointSequence: UInt64
    var checkpointEpoch: UInt64

    static let shared = Template.make()

    static func make() -> Template {
        let fileSystem = MemoryFileSystem(directories: ["/"])
        var options = JournalOptions(durability: .none, segmentSizeLimit: 4096)
        options.newStoreID = { Harness.storeID }
        options.clock = { Date(timeIntervalSince1970: 1_800_000_000) }
        do {
            let journal = try Journal.open(path: Harness.storePath, options: options, fileSystem: fileSystem)
            for epoch in 1...6 {
                var changes: [JournalChange] = []
                for object in 0..<8 where (object + epoch) % 3 != 0 {
                    let state =
                        Array("object \(object) at epoch \(epoch) ".utf8) + [UInt8](repeating: UInt8(object), count: 40)
                    changes.append(.put(RestorationPath("Main", "Object-\(object)"), state))
                }
                if epoch == 5 { changes.append(.remove(RestorationPath("Main", "Object-1"))) }
                _ = try journal.commit(changes, metadata: ["bundleVersion": "\(epoch)"])
                if epoch == 3 { _ = try journal.compact() }
            }
            try journal.close()
        } catch {
            fatalError("the template store could not be written: \(error)")
        }
        var files: [String: [UInt8]] = [:]
        for (path, bytes) in fileSystem.files where path.hasPrefix(Harness.storePath + "/") {
            files[String(path.dropFirst(Harness.storePath.count + 1))] = bytes
        }
        guard let manifest = files["MANIFEST"], let count = manifest.littleEndian(UInt32.self, at: 48), count > 0,
            let sequence = manifest.littleEndian(UInt64.self, at: 52 + 24 * (Int(count) - 1)),
            let epoch = manifest.littleEndian(UInt64.self, at: 60 + 24 * (Int(count) - 1))
        else { fatalError("the template store has no checkpoint") }
        let hex = String(sequence, radix: 16)
        let name = "checkpoint-" + String(repeating: "0", count: 16 - hex.count) + hex + ".lz4"
        guard files[name] != nil else { fatalError("the template store's manifest names a missing checkpoint") }
        return Template(files: files, checkpointName: name, checkpointSequence: sequence, checkpointEpoch: epoch)
    }
}
