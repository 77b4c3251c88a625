/// The buffers an epoch is written with, owned by the journal and lent to one ``EpochWriter`` at a
/// time (one epoch is open at most), so that committing an epoch allocates nothing that the last
/// epoch could not leave behind: the batch being built, the raw body of the batch before it (the
/// next batch's dictionary), the dictionary, the record being framed, and the sets of paths the
/// epoch touched.
///
/// A buffer that an unusually large epoch grew beyond ``retainedCapacity`` is given back rather
/// than kept, so that one full save does not pin its memory, nor make every later epoch clear a
/// large set.
///
/// Its properties are exempt from Swift's dynamic exclusivity checks, which cost a one-entry commit
/// more than its compression: only the open epoch's writer uses them, with the journal's lock held.
final class EpochBuffers {
    static let retainedCapacity = 256 << 10
    static let retainedPaths = 4096

    @exclusivity(unchecked) var builder = BatchBuilder()
    @exclusivity(unchecked) var touchedInBatch: Set<RestorationPath> = []
    @exclusivity(unchecked) var touchedInEpoch: Set<RestorationPath> = []
    @exclusivity(unchecked) var previousBody: [UInt8] = []
    @exclusivity(unchecked) var body: [UInt8] = []
    @exclusivity(unchecked) var dictionary: [UInt8] = []
    @exclusivity(unchecked) var record = ByteWriter(capacity: 256)

    /// Empties the buffers for a new epoch.
    func reset() {
        builder.reset()
        Self.empty(&touchedInBatch)
        Self.empty(&touchedInEpoch)
        Self.empty(&previousBody)
        Self.empty(&body)
        Self.empty(&dictionary)
        Self.empty(&record.bytes)
    }

    static func empty(_ bytes: inout [UInt8]) {
        if bytes.isEmpty { return }
        if bytes.capacity > retainedCapacity { bytes = [] } else { bytes.removeAll(keepingCapacity: true) }
    }

    static func empty(_ paths: inout Set<RestorationPath>) {
        if paths.isEmpty { return }
        if paths.capacity > retainedPaths { paths = [] } else { paths.removeAll(keepingCapacity: true) }
    }
}
