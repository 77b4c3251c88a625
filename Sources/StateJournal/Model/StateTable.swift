import Foundation

/// The live paths of a state and their state bytes: what ``JournalState`` holds and replay builds.
///
/// Paths and states stay in the stored form, in a few ``StateArena``s (the checkpoint's
/// decompressed content is the first), and each entry is a slot pointing into them, kept in path
/// order (``EncodedPath/precedes(_:_:)``). A `RestorationPath` is built only when one is asked for.
/// Lookups by path go through a hash index built on the first lookup; replay applies a segment's
/// changes in one merge (``applying(_:)``).
///
/// The table is immutable and shared: copies share one storage, and a change makes a new table.
struct StateTable: Sendable {
    /// One entry: where its path and its state are.
    struct Slot {
        var path: UnsafeRawPointer
        var value: UnsafeRawPointer
        var pathCount: Int32
        /// The state's length, or -1 while a merge marks the slot removed.
        var valueCount: Int32

        var encodedPath: EncodedPath { EncodedPath(start: path, count: Int(pathCount)) }
        var state: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: value, count: Int(valueCount)) }
    }

    /// One change a segment made to a path: its new state, or `nil` when it was removed.
    struct Change {
        /// ``slot`` when the path's slot number is not known.
        static let unknown: Int32 = -2
        /// ``slot`` when the table has no such path.
        static let absent: Int32 = -1

        var path: EncodedPath
        var state: [UInt8]?
        /// The path's slot number in the table the change is applied to, when the caller looked it
        /// up already; ``absent`` or ``unknown`` otherwise.
        var slot: Int32 = Change.unknown
        /// What keeps ``path``'s bytes alive, when the change owns them.
        private var owner: StateArena?

        /// A change to `path`, whose bytes must stay valid until the change is applied; `slot` is
        /// the path's slot number in the table it is applied to, if known.
        init(path: EncodedPath, state: [UInt8]?, slot: Int32 = Change.unknown) {
            self.path = path
            self.state = state
            self.slot = slot
        }

        /// A change to `path`, encoded into memory the change keeps.
        init(path: RestorationPath, state: [UInt8]?) {
            let builder = StateArenaBuilder()
            EncodedPath.append(path, to: builder)
            let arena = builder.finish()
            self.path = EncodedPath(start: arena.base, count: arena.count)
            self.state = state
            owner = arena
        }
    }

    fileprivate final class Storage: @unchecked Sendable {
        // Unchecked: everything is immutable after init except `index`, which `lock` guards.
        let arenas: [StateArena]
        let slots: [Slot]
        /// The bytes of the paths and states the slots point to.
        let liveBytes: Int
        private let lock = NSLock()
        private var index: PathHashIndex?
        /// Lookups made by binary search, and those asked for by ``index(for:)`` meanwhile.
        private var searches = 0

        init(arenas: [StateArena], slots: [Slot], liveBytes: Int, index: PathHashIndex? = nil) {
            self.arenas = arenas
            self.slots = slots
            self.liveBytes = liveBytes
            self.index = index
        }

        var arenaBytes: Int { arenas.reduce(0) { $0 + $1.count } }

        /// The hash index if it was built.
        var builtIndex: PathHashIndex? {
            lock.lock()
            defer { lock.unlock() }
            return index
        }

        /// The hash index of the slots' paths for `lookups` more lookups, or `nil` when they are to
        /// be made by binary search.
        ///
        /// Building the index hashes every path (about 600 instructions a path, 0.15 s for a
        /// million), and a binary search costs about twenty path comparisons: the index is built
        /// once the lookups made and asked for outnumber a sixteenth of the slots (and 64), so that
        /// opening a large store, whose journal after the checkpoint names a few of its paths, does
        /// not hash all of them, and a table that is searched a lot pays for its index once.
        func index(for lookups: Int) -> PathHashIndex? {
            lock.lock()
            defer { lock.unlock() }
            if let index { return index }
            searches += lookups
            guard searches > max(64, slots.count / 16) else { return nil }
            let slots = self.slots
            let built = PathHashIndex(count: slots.count) { slots[$0].encodedPath.pathHashValue }
            index = built
            return built
        }
    }

    private let storage: Storage

    private init(storage: Storage) { self.storage = storage }

    /// An empty state.
    init() { storage = Storage(arenas: [], slots: [], liveBytes: 0) }

    /// Builds a table from paths and states in `arenas`, and checks that no path repeats.
    ///
    /// `slots` are sorted here unless they already are in path order, as a checkpoint's are.
    /// - Throws: ``FormatViolation`` when a path repeats.
    init(arenas: [StateArena], slots unsorted: [Slot]) throws(FormatViolation) {
        var slots = unsorted
        var ordered = true
        var liveBytes = 0
        for index in slots.indices {
            liveBytes += Int(slots[index].pathCount) + Int(slots[index].valueCount)
            if index > 0 && ordered {
                let order = EncodedPath.compare(slots[index - 1].encodedPath, slots[index].encodedPath)
                if order == 0 { throw FormatViolation("the path \(slots[index].encodedPath.restorationPath) repeats") }
                if order > 0 { ordered = false }
            }
        }
        if !ordered {
            slots.sort { EncodedPath.precedes($0.encodedPath, $1.encodedPath) }
            for index in slots.indices.dropFirst()
            where EncodedPath.compare(slots[index - 1].encodedPath, slots[index].encodedPath) == 0 {
                throw FormatViolation("the path \(slots[index].encodedPath.restorationPath) repeats")
            }
        }
        // Path order treats canonically equivalent spellings as the same path, so a repeat in any
        // spelling ends up next to the path it repeats.
        storage = Storage(arenas: arenas, slots: slots, liveBytes: liveBytes)
    }

    /// Builds a table from paths and states in `arenas`, whose `slots` the caller has checked to be
    /// in path order with no path repeated (a checkpoint's, as its decoder reads them).
    init(arenas: [StateArena], slotsInPathOrder slots: [Slot]) {
        let liveBytes = slots.reduce(0) { $0 + Int($1.pathCount) + Int($1.valueCount) }
        storage = Storage(arenas: arenas, slots: slots, liveBytes: liveBytes)
    }

    /// The number of live paths.
    var count: Int { storage.slots.count }

    /// The bytes of the live paths and states.
    var liveBytes: Int { storage.liveBytes }

    /// The bytes of the arenas, replaced states included.
    var arenaBytes: Int { storage.arenaBytes }

    /// Calls `body` with the slots, in path order, while the arenas they point into are alive.
    func withSlots<R>(_ body: (UnsafeBufferPointer<Slot>) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) { try storage.slots.withUnsafeBufferPointer(body) }
    }

    /// The hash index of the paths if a lookup built it already: its hashes, by slot number, are
    /// those `RestorationPath`s of the paths carry.
    var builtIndex: PathHashIndex? { storage.builtIndex }

    /// Keeps the arenas alive as long as `owner` is: for iterators that hold slots.
    var owner: AnyObject { storage }

    /// The slots, in path order; they point into arenas that live as long as ``owner``.
    var slots: [Slot] { storage.slots }

    /// The slot number of `path`, or `nil` when the state has no such path.
    func slotNumber(of path: RestorationPath) -> Int? {
        guard !storage.slots.isEmpty else { return nil }
        return withExtendedLifetime(storage) {
            if let index = storage.index(for: 1) {
                return index.find(hash: path.pathHash) { storage.slots[$0].encodedPath.matches(path) }
            }
            return EncodedPath.withEncoded(path) { search($0) }
        }
    }

    /// The slot number of `path`, or `nil` when the state has no such path.
    func slotNumber(of path: EncodedPath) -> Int? {
        guard !storage.slots.isEmpty else { return nil }
        return withExtendedLifetime(storage) {
            guard let index = storage.index(for: 1) else { return search(path) }
            return index.find(hash: path.pathHashValue) { EncodedPath.same(storage.slots[$0].encodedPath, path) }
        }
    }

    /// The slot number of `path` found by binary search in the slots, which are in path order.
    /// Called with the storage kept alive.
    private func search(_ path: EncodedPath) -> Int? {
        storage.slots.withUnsafeBufferPointer { slots in
            var low = 0
            var high = slots.count
            while low < high {
                let middle = (low + high) / 2
                let order = EncodedPath.compare(slots[middle].encodedPath, path)
                if order == 0 { return middle }
                if order < 0 { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// The slot numbers of `count` paths, whose ``EncodedPath/pathHashValue``s `hash` gives, as
    /// ``slotNumber(of:)`` gives them one by one, appended to `numbers` (``Change/absent`` where the
    /// state has no such path). Returns a value derived from what the first stages read, which the
    /// caller must keep, as ``BatchDecoder/warmth`` is kept.
    ///
    /// The lookups are made in stages (the buckets where they start, then the slots and paths these
    /// name, then the lookups themselves), each of whose memory loads waits on no other, so that the
    /// cache misses of many lookups overlap instead of coming one after another: replaying the
    /// first segment after a checkpoint looks up most of the state's paths this way.
    func slotNumbers(
        _ count: Int, path: (Int) -> EncodedPath, hash: (Int) -> Int, into numbers: inout [Int32]
    ) -> Int {
        let first = numbers.count
        guard !storage.slots.isEmpty else {
            numbers.append(contentsOf: repeatElement(Change.absent, count: count))
            return 0
        }
        return withExtendedLifetime(storage) {
            guard let index = storage.index(for: count) else {
                for offset in 0..<count { numbers.append(search(path(offset)).map { Int32($0) } ?? Change.absent) }
                return 0
            }
            for offset in 0..<count { numbers.append(Int32(index.likelyNumber(hash: hash(offset)))) }
            var touched = 0
            storage.slots.withUnsafeBufferPointer { slots in
                for offset in 0..<count where numbers[first + offset] >= 0 {
                    touched &+= Int(slots[Int(numbers[first + offset])].path.load(as: UInt8.self))
                }
            }
            for offset in 0..<count {
                let path = path(offset)
                let found = index.find(hash: hash(offset)) { EncodedPath.same(storage.slots[$0].encodedPath, path) }
                numbers[first + offset] = found.map { Int32($0) } ?? Change.absent
            }
            return touched
        }
    }

    /// Calls `body` with the state of `path`, or returns `nil` when the state has no such path.
    func withState<R>(of path: RestorationPath, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard let number = slotNumber(of: path) else { return nil }
        return try withExtendedLifetime(storage) { try body(storage.slots[number].state) }
    }

    /// Calls `body` with the state of `path`, or returns `nil` when the state has no such path.
    func withState<R>(of path: EncodedPath, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard let number = slotNumber(of: path) else { return nil }
        return try withExtendedLifetime(storage) { try body(storage.slots[number].state) }
    }

    /// Calls `body` with the state of the entry `number`.
    func withState<R>(ofSlot number: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) { try body(storage.slots[number].state) }
    }

    /// The table with a segment's changes applied: one merge for all of them.
    ///
    /// `changes` names each path at most once, as a segment's path table does. New states and paths
    /// go to one new arena. When the arenas hold more than twice the live bytes (states that later
    /// ones replaced), the live ones move into a single arena.
    func applying(_ changes: [Change]) -> StateTable {
        guard !changes.isEmpty else { return self }
        let builder = StateArenaBuilder(capacity: changes.reduce(0) { $0 + ($1.state?.count ?? 0) + 32 })
        var slots = storage.slots
        var liveBytes = storage.liveBytes
        var updates: [(number: Int, offset: Int, count: Int)] = []
        var insertions: [(pathOffset: Int, pathCount: Int, offset: Int, count: Int)] = []
        var removals = false
        for change in changes {
            let existing: Int? =
                switch change.slot {
                case Change.unknown: slotNumber(of: change.path)
                case Change.absent: nil
                default: Int(change.slot)
                }
            if let state = change.state {
                let offset = state.withUnsafeBytes { builder.append($0) }
                if let existing {
                    liveBytes += state.count - Int(slots[existing].valueCount)
                    updates.append((existing, offset, state.count))
                } else {
                    let pathOffset = builder.append(change.path.bytes)
                    let pathCount = change.path.count
                    liveBytes += pathCount + state.count
                    insertions.append((pathOffset, pathCount, offset, state.count))
                }
            } else if let existing, slots[existing].valueCount >= 0 {
                liveBytes -= Int(slots[existing].pathCount) + Int(slots[existing].valueCount)
                slots[existing].valueCount = -1
                removals = true
            }
        }
        let arena = builder.finish()
        for update in updates {
            slots[update.number].value = UnsafeRawPointer(arena.base + update.offset)
            slots[update.number].valueCount = Int32(update.count)
        }
        var inserted = insertions.map {
            Slot(
                path: UnsafeRawPointer(arena.base + $0.pathOffset), value: UnsafeRawPointer(arena.base + $0.offset),
                pathCount: Int32($0.pathCount), valueCount: Int32($0.count))
        }
        // When only states changed, every slot keeps its number and the index still holds.
        let index = removals || !inserted.isEmpty ? nil : storage.builtIndex
        if removals { slots.removeAll { $0.valueCount < 0 } }
        if !inserted.isEmpty {
            Self.sortInPathOrder(&inserted)
            slots = Self.merge(slots, inserted)
        }
        let table = StateTable(
            storage: Storage(arenas: storage.arenas + [arena], slots: slots, liveBytes: liveBytes, index: index))
        return table.storage.arenaBytes > 2 * liveBytes + (1 << 20) ? table.compacted() : table
    }

    /// The same table with every live path and state copied into one arena.
    private func compacted() -> StateTable {
        let builder = StateArenaBuilder(capacity: storage.liveBytes)
        var offsets: [(path: Int, value: Int)] = []
        offsets.reserveCapacity(count)
        withSlots { slots in
            for slot in slots {
                let path = builder.append(slot.encodedPath.bytes)
                offsets.append((path, builder.append(slot.state)))
            }
        }
        let arena = builder.finish()
        var slots = storage.slots
        for index in slots.indices {
            slots[index].path = UnsafeRawPointer(arena.base + offsets[index].path)
            slots[index].value = UnsafeRawPointer(arena.base + offsets[index].value)
        }
        return StateTable(
            storage: Storage(arenas: [arena], slots: slots, liveBytes: storage.liveBytes, index: storage.builtIndex))
    }

    /// Sorts slots in path order.
    ///
    /// For paths whose components are ASCII without NUL, path order is the byte order of the
    /// components joined and ended by NUL, so those compare with one `memcmp` of such a key instead
    /// of component by component; pairs involving any other path use ``EncodedPath/compare(_:_:)``.
    /// Either way the order is the same.
    static func sortInPathOrder(_ slots: inout [Slot]) {
        guard slots.count > 1 else { return }
        let keys = StateArenaBuilder(capacity: slots.reduce(0) { $0 + Int($1.pathCount) })
        var keyRanges: [(start: Int, count: Int)] = []
        keyRanges.reserveCapacity(slots.count)
        for slot in slots {
            let start = keys.count
            var simple = true
            slot.encodedPath.forEachComponent { component in
                guard simple else { return }
                if !EncodedPath.isASCII(component) || component.contains(0) {
                    simple = false
                    return
                }
                keys.append(component)
                keys.appendVarint(0)
            }
            keyRanges.append(simple ? (start, keys.count - start) : (start, -1))
        }
        let arena = keys.finish()
        var order = Array(slots.indices)
        withExtendedLifetime(arena) {
            order.sort { left, right in
                let leftKey = keyRanges[left]
                let rightKey = keyRanges[right]
                guard leftKey.count >= 0, rightKey.count >= 0 else {
                    return EncodedPath.precedes(slots[left].encodedPath, slots[right].encodedPath)
                }
                let common = min(leftKey.count, rightKey.count)
                let order = memcmp(arena.base + leftKey.start, arena.base + rightKey.start, common)
                return order != 0 ? order < 0 : leftKey.count < rightKey.count
            }
        }
        slots = order.map { slots[$0] }
    }

    /// Merges two runs of slots in path order; no path is in both.
    private static func merge(_ left: [Slot], _ right: [Slot]) -> [Slot] {
        var merged: [Slot] = []
        merged.reserveCapacity(left.count + right.count)
        var leftIndex = 0
        var rightIndex = 0
        while leftIndex < left.count && rightIndex < right.count {
            if EncodedPath.precedes(right[rightIndex].encodedPath, left[leftIndex].encodedPath) {
                merged.append(right[rightIndex])
                rightIndex += 1
            } else {
                merged.append(left[leftIndex])
                leftIndex += 1
            }
        }
        merged.append(contentsOf: left[leftIndex...])
        merged.append(contentsOf: right[rightIndex...])
        return merged
    }
}

extension EncodedPath {
    /// The path as a `RestorationPath`.
    var restorationPath: RestorationPath {
        var decoder = EncodedPathDecoder()
        return decoder.decode(self)
    }
}
