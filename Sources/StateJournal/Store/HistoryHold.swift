import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The bytes of the `HOLD` file: `SJHH`, version 1, the held epoch (UInt64, little-endian), and the
/// CRC-32C of what precedes (UInt32, little-endian): 17 bytes.
enum HistoryHoldFile {
    static let magic: [UInt8] = Array("SJHH".utf8)
    static let size = 17

    static func encode(_ epoch: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: size)
        writer.raw(magic)
        writer.u8(1)
        writer.u64(epoch)
        writer.u32(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    /// The held epoch, or `nil` when the bytes are not an intact hold of this version.
    static func decode(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count == size, Array(bytes[0..<4]) == magic, bytes[4] == 1 else { return nil }
        return bytes.withUnsafeBytes { raw -> UInt64? in
            guard
                CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<13]))
                    == ByteReader.littleEndianU32(raw, at: 13)
            else { return nil }
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[5..<13]))
            return try? reader.u64()
        }
    }
}

extension StoreDirectory {
    /// The epoch the store's `HOLD` file holds history from; `nil` without one. A file that is
    /// there but not an intact hold holds everything (epoch 0): a damaged hold must not let
    /// retention delete what it was written to keep.
    func readHistoryHold() throws -> UInt64? {
        guard let descriptor = try openIfPresent(FileNames.historyHold) else { return nil }
        defer { fileSystem.close(descriptor) }
        let bytes = try fileSystem.read(descriptor, count: HistoryHoldFile.size + 1, at: 0)
        return HistoryHoldFile.decode(bytes) ?? 0
    }
}

extension Journal {
    /// The epoch from which retention keeps the history whatever its policy, or `nil`.
    ///
    /// See ``holdHistory(from:)``.
    public var historyHold: UInt64? { condition.withLock { heldHistory } }

    /// Keeps the history from `epoch` on, whatever the retention policy says, until
    /// ``releaseHistoryHold()``: compaction still folds the journal, but deletes no checkpoint or
    /// segment that replaying `epoch` or a later epoch needs. Only the format's own limits on what a
    /// manifest names (``RetentionPolicy``) come first.
    ///
    /// The hold is a small file in the store (`HOLD`), written durably before this returns, and
    /// kept across launches. A later hold replaces an earlier one only when it holds more: the
    /// older of the two epochs is kept. The restoration layer holds the state a crash-loop fallback
    /// avoided, so that the app or an operator can bring it back.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/ioFailure`` when the file cannot be
    ///   written and synced.
    public func holdHistory(from epoch: UInt64) throws {
        let held = condition.withLock { heldHistory }
        let epoch = min(epoch, held ?? epoch)
        guard held != epoch else { return }
        do {
            try fileSystem.replaceAtomically(
                store.file(FileNames.historyHold), in: store.path, with: HistoryHoldFile.encode(epoch))
        } catch {
            throw Self.ioError(error, "write the history hold", file: store.file(FileNames.historyHold))
        }
        condition.withLock { heldHistory = epoch }
        logger.notice(
            "History is held from an epoch on, whatever the retention policy", metadata: ["epoch": "\(epoch)"])
    }

    /// Lets retention delete the history ``holdHistory(from:)`` held, at the next compaction.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/ioFailure`` when the file cannot be
    ///   removed.
    public func releaseHistoryHold() throws {
        do {
            try fileSystem.remove(store.file(FileNames.historyHold))
            try fileSystem.syncDirectory(store.path)
        } catch let error as SystemError where error.errno == ENOENT {
        } catch {
            throw Self.ioError(error, "remove the history hold", file: store.file(FileNames.historyHold))
        }
        condition.withLock { heldHistory = nil }
    }
}
