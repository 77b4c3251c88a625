#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension StoreDirectory {
    /// The manifest with the segments that continue its last one appended: a segment the writer
    /// started after its last manifest was written.
    ///
    /// A writer rolls to a new segment without waiting for a new manifest: it writes the new
    /// segment's header, then a seal record at the end of the old segment naming the new one, and
    /// commits into the new segment at once, writing the manifest afterwards. A crash in between
    /// leaves a manifest whose last segment ends in a seal naming a segment it does not list. That
    /// segment belongs to the store when its header says so: the same store, the sequence the seal
    /// names, and as its base the last epoch the seal names. Anything else is a leftover.
    ///
    /// - Throws: a ``SystemError`` when a file that exists cannot be read.
    func followingSealedSegments(of manifest: Manifest) throws -> Manifest {
        var resolved = manifest
        // Each step follows a seal to a higher sequence, so the chain ends; the bound only stops a
        // directory crafted to make it long.
        for _ in 0..<64 {
            guard let last = resolved.segments.last, let seal = try trailingSeal(of: last),
                seal.nextSegment > last, !resolved.segments.contains(seal.nextSegment),
                !resolved.checkpoints.contains(where: { $0.sequence == seal.nextSegment }),
                let header = try header(of: seal.nextSegment),
                header.storeID == manifest.storeID, header.sequence == seal.nextSegment,
                header.baseEpoch == seal.lastEpoch
            else { break }
            resolved.segments.append(seal.nextSegment)
            resolved.chainedSegments += 1
            resolved.nextFileSequence = max(resolved.nextFileSequence, seal.nextSegment + 1)
        }
        return resolved
    }

    /// The seal record a segment ends with, or `nil` when it does not end with an intact one.
    private func trailingSeal(of sequence: UInt64) throws -> SealRecord? {
        guard let descriptor = try openIfPresent(FileNames.segment(sequence)) else { return nil }
        defer { fileSystem.close(descriptor) }
        let size = try fileSystem.size(descriptor)
        guard size >= Int64(SegmentHeader.size) else { return nil }
        let headerBytes = try fileSystem.read(descriptor, count: SegmentHeader.size, at: 0)
        guard let version = try? headerBytes.withUnsafeBytes({ try SegmentHeader.decode($0) }).version else {
            return nil
        }
        let longest = Int64(RecordFraming.maximumHeaderSize + SealRecord.maximumPayloadSize)
        let start = max(Int64(SegmentHeader.size), size - longest)
        guard size > start else { return nil }
        let tail = try fileSystem.read(descriptor, count: Int(size - start), at: start)
        let shortest = RecordFraming.minimumHeaderSize(version) + SealRecord.minimumPayloadSize
        guard tail.count >= shortest else { return nil }
        return tail.withUnsafeBytes { bytes in
            // The payload is two varints, so the record's length is not fixed: try each length that
            // ends exactly at the end of the file. The checksum decides.
            for length in shortest...min(bytes.count, Int(longest)) {
                let record = UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - length)...])
                guard let header = RecordFraming.header(record, version: version),
                    header.typeByte == RecordType.seal.rawValue,
                    header.size + header.length == length,
                    CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[4...]))
                        == ByteReader.littleEndianU32(record, at: 0)
                else { continue }
                return try? SealRecord.decode(UnsafeRawBufferPointer(rebasing: record[header.size...]))
            }
            return nil
        }
    }
}
