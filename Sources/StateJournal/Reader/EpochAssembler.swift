/// Applies decoded entries epoch by epoch, so that an epoch applies wholly or not at all.
///
/// Within a segment, entries are applied to a table indexed by the segment's path numbers (see
/// ``BatchEntrySink``) instead of to the state dictionary: a path changed a thousand times in a
/// segment is hashed once, when the segment ends and its latest value is written to ``state``. Each
/// change the epoch being read makes is remembered in an undo list, which ``commit()`` forgets and
/// ``discard()`` plays back.
struct EpochAssembler: BatchEntrySink {
    /// The state as of the end of the last segment (or of the checkpoint), without the changes in
    /// ``slots``: see ``finish()``.
    private var state: [RestorationPath: [UInt8]] = [:]
    /// Per path number of the current segment, the path and its value as of the last change read.
    private var slots: [Slot] = []
    private var undo: [Undo] = []
    private var pendingChanges: [JournalChange] = []
    let keepsChanges: Bool

    /// What a path's value is in the current segment.
    private enum Value {
        /// Not changed in this segment: as in ``state``.
        case inherited
        case present([UInt8])
        case absent
    }

    private struct Slot {
        let path: RestorationPath
        var value: Value
    }

    /// How to take back one change of the epoch being read.
    private enum Undo {
        case slot(Int, Value)
        /// Undoes a `removeAll`: the state and the slots' values as they were before it.
        case clear([RestorationPath: [UInt8]], [Value])
    }

    init(keepsChanges: Bool) { self.keepsChanges = keepsChanges }

    /// Starts from a checkpoint's state.
    mutating func load(_ entries: [RestorationPath: [UInt8]]) { state = entries }

    /// The committed state, once the pending changes are dropped and the segment's table folded in.
    mutating func finish() -> [RestorationPath: [UInt8]] {
        endSegment()
        return state
    }

    /// Drops the pending changes and folds the segment's path table into ``state``: called when a
    /// segment's scan ends, however it ends, before the next segment numbers its paths anew.
    mutating func endSegment() {
        discard()
        for slot in slots {
            switch slot.value {
            case .inherited: break
            case .present(let bytes): state[slot.path] = bytes
            case .absent: state.removeValue(forKey: slot.path)
            }
        }
        slots.removeAll(keepingCapacity: true)
    }

    func currentState(ofPath index: Int) -> [UInt8]? {
        switch slots[index].value {
        case .inherited: state[slots[index].path]
        case .present(let bytes): bytes
        case .absent: nil
        }
    }

    mutating func pathDefined(_ path: RestorationPath) {
        slots.append(Slot(path: path, value: .inherited))
    }

    mutating func put(path index: Int, state bytes: UnsafeRawBufferPointer) {
        set(index, .present(Array(bytes)))
    }

    mutating func remove(path index: Int) {
        set(index, .absent)
    }

    mutating func removeAll() {
        undo.append(.clear(state, slots.map(\.value)))
        state = [:]
        for index in slots.indices { slots[index].value = .absent }
        if keepsChanges { pendingChanges.append(.removeAll) }
    }

    private mutating func set(_ index: Int, _ value: Value) {
        let old = slots[index].value
        slots[index].value = value
        undo.append(.slot(index, old))
        if keepsChanges {
            switch value {
            case .present(let bytes): pendingChanges.append(.put(slots[index].path, bytes))
            default: pendingChanges.append(.remove(slots[index].path))
            }
        }
    }

    /// Makes the pending changes part of the state and returns them (when ``keepsChanges``).
    mutating func commit() -> [JournalChange] {
        undo.removeAll(keepingCapacity: true)
        defer { pendingChanges.removeAll(keepingCapacity: true) }
        return pendingChanges
    }

    /// Takes back the pending changes.
    mutating func discard() {
        while let last = undo.popLast() {
            switch last {
            case .slot(let index, let value): slots[index].value = value
            case .clear(let previousState, let values):
                state = previousState
                for index in slots.indices { slots[index].value = index < values.count ? values[index] : .inherited }
            }
        }
        pendingChanges.removeAll(keepingCapacity: true)
    }
}
