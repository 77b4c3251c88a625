/// Applies decoded entries epoch by epoch, so that an epoch applies wholly or not at all.
///
/// Within a segment, entries are applied to a table indexed by the segment's path numbers (see
/// ``BatchEntrySink``) instead of to the state: a path changed a thousand times in a segment is
/// looked up once, when the segment ends and its latest value moves into the state in one merge
/// (``StateTable/applying(_:)``).
///
/// Each path's value lives in its own array, which a put overwrites in place when it fits, so that
/// replaying a change costs copies rather than an allocation and the release of the value it
/// replaces. To take back the epoch being read, each change first saves what it overwrites in an
/// undo list (and the bytes in ``undoBytes``), which ``commit()`` forgets and ``discard()`` plays back.
struct EpochAssembler: BatchEntrySink {
    /// The state as of the end of the last segment (or of the checkpoint), without the changes in
    /// ``slots``: see ``finish()``.
    private var state = StateTable()
    /// Per path number of the current segment, the path and its value as of the last change read.
    private var slots: [Slot] = []
    private var undo: [Undo] = []
    /// The bytes of the values the epoch being read overwrote, one after another.
    private var undoBytes: [UInt8] = []
    private var pendingChanges: [JournalChange] = []
    let keepsChanges: Bool
    /// Scratch for the slot numbers in ``state`` of the paths a batch defines.
    private var bases: [Int32] = []
    /// What ``StateTable/slotNumbers(_:path:hash:into:)`` returned, kept so that its reads stay.
    private(set) var warmth = 0
    /// The current segment's paths, which ``slots`` point into.
    private var segmentPaths: SegmentPaths?
    /// Builds the `RestorationPath`s of changes kept for a visitor; reset with each segment.
    private var pathDecoder = EncodedPathDecoder()

    private enum Status {
        /// Not changed in this segment: as in ``state``.
        case inherited
        /// The value is the slot's ``Slot/bytes``.
        case present
        case absent
    }

    private struct Slot {
        let path: EncodedPath
        /// The path's slot number in ``EpochAssembler/state``, ``StateTable/Change/absent`` when the
        /// state has no such path, or ``StateTable/Change/unknown``: looked up once per segment, for
        /// both the previous version replay reads and the merge at the segment's end.
        var base: Int32
        var status: Status
        /// The value when ``status`` is ``Status/present``; otherwise memory kept for the next put,
        /// none after a removal.
        var bytes: [UInt8]
    }

    /// How to take back one change of the epoch being read.
    private enum Undo {
        /// The slot's status before, and when it was present, where its bytes were saved.
        case slot(Int, Status, start: Int, count: Int)
        /// Undoes a `removeAll`: the state and the slots as they were before it.
        case clear(StateTable, [Slot])
    }

    init(keepsChanges: Bool) { self.keepsChanges = keepsChanges }

    /// Starts from a checkpoint's state.
    mutating func load(_ entries: StateTable) {
        state = entries
        for index in slots.indices { slots[index].base = StateTable.Change.unknown }
    }

    /// The committed state, once the pending changes are dropped and the segment's table folded in.
    mutating func finish() -> StateTable {
        endSegment()
        return state
    }

    /// Drops the pending changes and moves the segment's values into the state: called when a
    /// segment's scan ends, however it ends, before the next segment numbers its paths anew.
    mutating func endSegment() {
        discard()
        var changes: [StateTable.Change] = []
        for slot in slots {
            switch slot.status {
            case .inherited: break
            case .present: changes.append(StateTable.Change(path: slot.path, state: slot.bytes, slot: slot.base))
            case .absent: changes.append(StateTable.Change(path: slot.path, state: nil, slot: slot.base))
            }
        }
        slots.removeAll(keepingCapacity: true)
        state = state.applying(changes)
        segmentPaths = nil
        pathDecoder = EncodedPathDecoder()
    }

    func appendCurrentState(ofPath index: Int, to buffer: inout [UInt8]) -> Bool {
        switch slots[index].status {
        case .inherited:
            let base = slots[index].base
            guard base != StateTable.Change.unknown else {
                return state.withState(of: slots[index].path) { buffer.append(contentsOf: $0) } != nil
            }
            guard base >= 0 else { return false }
            state.withState(ofSlot: Int(base)) { buffer.append(contentsOf: $0) }
        case .present:
            // Borrowed through the buffer: reading a slot's array by value would retain and release it.
            slots.withUnsafeBufferPointer { slots in
                slots[index].bytes.withUnsafeBytes { buffer.append(contentsOf: $0) }
            }
        case .absent: return false
        }
        return true
    }

    func warmCurrentStates(ofPaths indices: UnsafeBufferPointer<Int>) -> Int {
        // Each iteration loads a slot, then its array's header (which shares a cache line with the
        // first bytes of the value); no iteration waits for another, so the processor keeps many of
        // these misses in flight at once.
        slots.withUnsafeBufferPointer { slots in
            var sum = 0
            for index in indices where index < slots.count {
                slots[index].bytes.withUnsafeBufferPointer { sum &+= Int($0.first ?? 0) }
            }
            return sum
        }
    }

    mutating func pathsDefined(_ numbers: Range<Int>, in paths: SegmentPaths) {
        segmentPaths = paths
        guard !numbers.isEmpty else { return }
        bases.removeAll(keepingCapacity: true)
        warmth &+= state.slotNumbers(
            numbers.count, path: { paths[numbers.lowerBound + $0] },
            hash: { paths.pathHash(of: numbers.lowerBound + $0) }, into: &bases)
        for (offset, number) in numbers.enumerated() {
            slots.append(Slot(path: paths[number], base: bases[offset], status: .inherited, bytes: []))
        }
    }

    mutating func put(path index: Int, state bytes: UnsafeRawBufferPointer) {
        saveForUndo(index)
        slots[index].status = .present
        // Reuse the slot's array unless it is shared or much larger than the new value (it becomes
        // part of the state the caller keeps).
        if slots[index].bytes.capacity > 2 * bytes.count + 64 {
            slots[index].bytes = Array(bytes)
        } else {
            slots[index].bytes.removeAll(keepingCapacity: true)
            slots[index].bytes.append(contentsOf: bytes)
        }
        if keepsChanges { pendingChanges.append(.put(pathDecoder.decode(slots[index].path), slots[index].bytes)) }
    }

    mutating func remove(path index: Int) {
        saveForUndo(index)
        slots[index].status = .absent
        // A removed path's memory goes now: a segment that defines and removes many paths keeps no
        // value for each (the undo list holds a copy while the epoch is open).
        slots[index].bytes = []
        if keepsChanges { pendingChanges.append(.remove(pathDecoder.decode(slots[index].path))) }
    }

    mutating func removeAll() {
        undo.append(.clear(state, slots))
        state = StateTable()
        for index in slots.indices {
            slots[index].status = .absent
            slots[index].base = StateTable.Change.absent
        }
        if keepsChanges { pendingChanges.append(.removeAll) }
    }

    private mutating func saveForUndo(_ index: Int) {
        let start = undoBytes.count
        if slots[index].status == .present { undoBytes.append(contentsOf: slots[index].bytes) }
        undo.append(.slot(index, slots[index].status, start: start, count: undoBytes.count - start))
    }

    /// The bytes the current segment's slots hold for values: the live values changed in the
    /// segment, and the memory kept for a path's next put.
    var slotCapacity: Int { slots.reduce(0) { $0 + $1.bytes.capacity } }

    /// Makes the pending changes part of the state and returns them (when ``keepsChanges``).
    mutating func commit() -> [JournalChange] {
        undo.removeAll(keepingCapacity: true)
        undoBytes.removeAll(keepingCapacity: true)
        defer { pendingChanges.removeAll(keepingCapacity: true) }
        return pendingChanges
    }

    /// Takes back the pending changes.
    mutating func discard() {
        while let last = undo.popLast() {
            switch last {
            case .slot(let index, let status, let start, let count):
                slots[index].status = status
                if status == .present { slots[index].bytes = Array(undoBytes[start..<start + count]) }
            case .clear(let previousState, let previousSlots):
                state = previousState
                let defined = slots[previousSlots.count...].map {
                    Slot(path: $0.path, base: StateTable.Change.unknown, status: .inherited, bytes: [])
                }
                slots = previousSlots + defined
            }
        }
        undoBytes.removeAll(keepingCapacity: true)
        pendingChanges.removeAll(keepingCapacity: true)
    }
}
