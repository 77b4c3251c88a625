import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The kinds of call the ``FileSystem`` seam makes that touch the disk. `close` is not counted: it
/// cannot fail through the seam.
package enum IOCallKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case open, write, read, size, truncate, dataSync, fullSync, rename, remove, makeDirectory, contentsOfDirectory,
        tryLock

    package var description: String { rawValue }

    /// The kinds a sync failure applies to.
    package static let syncs: Set<IOCallKind> = [.dataSync, .fullSync]
}

/// What an injected fault does to the call it hits.
package enum InjectedFault: Sendable, Hashable, CustomStringConvertible {
    /// The call fails with this `errno` and does nothing.
    case error(Int32)
    /// A write writes the first half of its bytes and returns that count (other calls fail with `EIO`).
    case shortWrite
    /// A write writes the first half of its bytes and then fails with this `errno` (other calls fail with it).
    case shortWriteThenError(Int32)

    package static let eio = InjectedFault.error(EIO)
    package static let enospc = InjectedFault.error(ENOSPC)

    package var description: String {
        switch self {
        case .error(let code): "error(\(Self.name(code)))"
        case .shortWrite: "shortWrite"
        case .shortWriteThenError(let code): "shortWriteThenError(\(Self.name(code)))"
        }
    }

    private static func name(_ code: Int32) -> String {
        switch code {
        case EIO: "EIO"
        case ENOSPC: "ENOSPC"
        default: "errno \(code)"
        }
    }
}

/// When a fault fires: at the `callNumber`-th call (counting from 1) among the calls of `kinds`, once
/// or at that call and every matching call after it.
package struct FaultPlan: Sendable, Hashable, CustomStringConvertible {
    package var callNumber: Int
    /// The kinds counted and hit; `nil` for every kind.
    package var kinds: Set<IOCallKind>?
    package var fault: InjectedFault
    package var persistent: Bool

    package init(at callNumber: Int, of kinds: Set<IOCallKind>? = nil, fault: InjectedFault, persistent: Bool = false) {
        self.callNumber = callNumber
        self.kinds = kinds
        self.fault = fault
        self.persistent = persistent
    }

    package var description: String {
        let which = kinds.map { $0.map(\.rawValue).sorted().joined(separator: "|") } ?? "any"
        return "\(fault) at \(which) call #\(callNumber)\(persistent ? " and after" : "")"
    }
}

/// A ``FileSystem`` over ``PosixFileSystem`` that counts the calls that touch the disk, can make one
/// of them (or every one from it on) fail, and remembers how much of each file was synced, so that
/// a test can build the image a power cut would leave.
///
/// Thread-safe: all bookkeeping is behind one mutex, and the real calls run outside it.
package final class FaultInjectingFileSystem: FileSystem {
    private struct State {
        var plan: FaultPlan?
        var totalCalls = 0
        var matchingCalls = 0
        var callsByKind: [IOCallKind: Int] = [:]
        var faultsFired = 0
        var log: [(IOCallKind, String)] = []
        var records: [IOCallRecord] = []
        var largestRead = 0
        var bytesRead = 0
        var unmatchedCloses = 0
        var descriptorPaths: [Int32: String] = [:]
        /// Per file: how many of its bytes are on stable storage, as far as this layer can tell.
        var durableLengths: [String: Int64] = [:]
        /// Per file: byte ranges a failed sync dropped (with `dropsPagesOnFailedSync`): readable
        /// until a power cut, never on the disk unless written again.
        var lostRanges: [String: [Range<Int64>]] = [:]
        /// Per file: the durable content of each page of ``shadowPageSize`` bytes that a write
        /// changed since the last sync, within the durable length: what the disk still holds there
        /// until a sync, since a write over synced bytes is no more durable than an append.
        var shadows: [String: [Int: [UInt8]]] = [:]
        /// Per file: pages of ``shadows`` whose writeback failed (with `dropsPagesOnFailedSync`):
        /// the disk keeps their old content even after later syncs, until they are written again.
        var droppedShadows: [String: [Int: [UInt8]]] = [:]
    }

    /// The page size of ``State/shadows``.
    package static let shadowPageSize = 4096

    private let base = PosixFileSystem()
    private let state: Locked<State>
    /// Held by each call that changes files, from after its gate to its end, and by
    /// ``writePowerLossImage(of:to:)``: an image is taken between calls, never in the middle of one
    /// that a background thread (a roll's, a compaction's) is making.
    private let changes = NSLock()
    private let gate = CallGate()
    private let keepsLog: Bool
    private let passesSyncsOn: Bool
    private let dropsPagesOnFailedSync: Bool

    /// - Parameters:
    ///   - plan: the fault to inject, if any.
    ///   - keepsLog: whether to keep a log of the calls (``log``).
    ///   - passesSyncsOn: whether `fsync` and `fdatasync` reach the disk. By default they do not:
    ///     what they would make durable is tracked (``writePowerLossImage(of:to:)``), and tests that
    ///     sync thousands of times stay fast and independent of the disk.
    ///   - dropsPagesOnFailedSync: whether a failed sync behaves as Linux's writeback does: the bytes
    ///     written since the file's last successful sync stay readable, but are never written to
    ///     the disk unless written again, so a power-cut image (``writePowerLossImage(of:to:)``)
    ///     shows zeros there even after a later sync succeeds.
    package init(
        plan: FaultPlan? = nil, keepsLog: Bool = false, passesSyncsOn: Bool = false,
        dropsPagesOnFailedSync: Bool = false
    ) {
        var initial = State()
        initial.plan = plan
        state = Locked(initial)
        self.keepsLog = keepsLog
        self.passesSyncsOn = passesSyncsOn
        self.dropsPagesOnFailedSync = dropsPagesOnFailedSync
    }

    // MARK: - Control and counters

    /// Replaces the fault plan; call numbers count from the next call on.
    package func arm(_ plan: FaultPlan?) {
        state.withLock {
            $0.plan = plan
            $0.matchingCalls = 0
        }
    }

    /// Every counted call so far.
    package var callCount: Int { state.withLock { $0.totalCalls } }
    /// How many calls of `kind` were made.
    package func callCount(of kind: IOCallKind) -> Int { state.withLock { $0.callsByKind[kind] ?? 0 } }
    /// How many calls of any of `kinds` were made.
    package func callCount(of kinds: Set<IOCallKind>) -> Int {
        state.withLock { s in kinds.reduce(0) { $0 + (s.callsByKind[$1] ?? 0) } }
    }
    /// How many calls a fault was injected into.
    package var faultsFired: Int { state.withLock { $0.faultsFired } }
    /// Closes of descriptors that were not open: a double close in the engine.
    package var unmatchedCloses: Int { state.withLock { $0.unmatchedCloses } }
    /// Descriptors this file system opened and has not closed.
    package var openDescriptorCount: Int { state.withLock { $0.descriptorPaths.count } }
    /// The largest single read request, in bytes: what a reader asked the disk for at once.
    package var largestRead: Int { state.withLock { $0.largestRead } }

    /// The bytes all reads returned, together.
    package var bytesRead: Int { state.withLock { $0.bytesRead } }
    /// The calls made, when created with `keepsLog`.
    package var log: [String] { state.withLock { $0.log.map { "\($0.0) \($0.1)" } } }
    /// The calls that change or sync files and directory entries, with ``mark(_:)``'s marks between
    /// them, when created with `keepsLog`: what ``DirectorySyncAudit`` checks.
    package var records: [IOCallRecord] { state.withLock { $0.records } }

    /// Puts a mark in ``records``, such as the moment a commit returned to its caller.
    package func mark(_ label: String) {
        guard keepsLog else { return }
        state.withLock { $0.records.append(IOCallRecord(.mark(label), path: "")) }
    }

    private func record(_ operation: IOCallRecord.Operation, _ path: String, to destination: String? = nil) {
        guard keepsLog else { return }
        state.withLock { $0.records.append(IOCallRecord(operation, path: path, destination: destination)) }
    }

    /// Makes every call of `kinds` wait, from now until ``release()``: a disk that stops answering.
    package func hold(_ kinds: Set<IOCallKind>) { gate.hold(kinds) }

    /// Lets the held calls, and every later call, go on.
    package func release() { gate.release() }

    /// Waits until a call is held, or until `deadline`; returns whether one is.
    package func waitForHeldCall(until deadline: Date) -> Bool { gate.waitForHeldCall(until: deadline) }

    /// Counts the call and says which fault to inject into it, if any.
    private func enter(_ kind: IOCallKind, _ detail: @autoclosure () -> String) -> InjectedFault? {
        gate.pass(kind)
        let entry = keepsLog ? detail() : nil
        return state.withLock { s in
            s.totalCalls += 1
            s.callsByKind[kind, default: 0] += 1
            if let entry { s.log.append((kind, entry)) }
            guard let plan = s.plan, plan.kinds?.contains(kind) ?? true else { return nil }
            s.matchingCalls += 1
            let hit = plan.persistent ? s.matchingCalls >= plan.callNumber : s.matchingCalls == plan.callNumber
            guard hit else { return nil }
            s.faultsFired += 1
            return plan.fault
        }
    }

    private static func failure(_ fault: InjectedFault, _ call: String, _ path: String? = nil) -> SystemError {
        switch fault {
        case .error(let code), .shortWriteThenError(let code): SystemError(call: call, errno: code, path: path)
        case .shortWrite: SystemError(call: call, errno: EIO, path: path)
        }
    }

    private func path(of descriptor: Int32) -> String? { state.withLock { $0.descriptorPaths[descriptor] } }

    /// Records that a file's length before a change was durable, the first time it changes.
    private func noteChange(_ descriptor: Int32) {
        guard let path = path(of: descriptor) else { return }
        let known = state.withLock { $0.durableLengths[path] != nil }
        if !known, let size = try? base.size(descriptor) {
            state.withLock { if $0.durableLengths[path] == nil { $0.durableLengths[path] = size } }
        }
    }

    // MARK: - FileSystem

    package func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 {
        if let fault = enter(.open, path) { throw Self.failure(fault, "open", path) }
        changes.lock()
        defer { changes.unlock() }
        let existed = FileManager.default.fileExists(atPath: path)
        let descriptor = try base.open(path, mode)
        state.withLock {
            $0.descriptorPaths[descriptor] = path
            if !existed { $0.durableLengths[path] = 0 }
        }
        if !existed { record(.create, path) }
        return descriptor
    }

    /// Closing a descriptor this file system did not open, or closed already, is counted and not
    /// passed on: in a process with other threads, a second close can close someone else's file.
    package func close(_ descriptor: Int32) {
        let known = state.withLock { s in
            let known = s.descriptorPaths.removeValue(forKey: descriptor) != nil
            if !known { s.unmatchedCloses += 1 }
            return known
        }
        if known { base.close(descriptor) }
    }

    package func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        let fault = enter(.write, "\(path(of: descriptor) ?? "?") @\(offset) +\(bytes.count)")
        changes.lock()
        defer { changes.unlock() }
        noteChange(descriptor)
        keepDurableContent(descriptor, of: offset..<(offset + Int64(bytes.count)))
        if fault == nil, let path = path(of: descriptor) { record(.write, path) }
        switch fault {
        case nil:
            let count = try base.write(descriptor, bytes, at: offset)
            if dropsPagesOnFailedSync, let path = path(of: descriptor) {
                state.withLock {
                    $0.lostRanges[path] = Self.subtracting(offset..<(offset + Int64(count)), from: $0.lostRanges[path])
                }
            }
            return count
        case .shortWrite?:
            let part = bytes.count / 2
            return part == 0
                ? 0 : try base.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[..<part]), at: offset)
        case .shortWriteThenError(let code)?:
            let part = bytes.count / 2
            if part > 0 { _ = try base.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[..<part]), at: offset) }
            throw SystemError(call: "pwrite", errno: code)
        case .error(let code)?:
            throw SystemError(call: "pwrite", errno: code)
        }
    }

    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let fault = enter(.read, "\(path(of: descriptor) ?? "?") @\(offset) +\(buffer.count)")
        state.withLock { $0.largestRead = max($0.largestRead, buffer.count) }
        if let fault { throw Self.failure(fault, "pread") }
        let count = try base.read(descriptor, into: buffer, at: offset)
        state.withLock { $0.bytesRead += count }
        return count
    }

    package func size(_ descriptor: Int32) throws -> Int64 {
        if let fault = enter(.size, path(of: descriptor) ?? "?") { throw Self.failure(fault, "fstat") }
        return try base.size(descriptor)
    }

    package func truncate(_ descriptor: Int32, to size: Int64) throws {
        if let fault = enter(.truncate, "\(path(of: descriptor) ?? "?") to \(size)") {
            throw Self.failure(fault, "ftruncate")
        }
        changes.lock()
        defer { changes.unlock() }
        noteChange(descriptor)
        try base.truncate(descriptor, to: size)
        if let path = path(of: descriptor) { record(.write, path) }
        if let path = path(of: descriptor) {
            state.withLock {
                $0.durableLengths[path] = min($0.durableLengths[path] ?? size, size)
                $0.lostRanges[path] = Self.subtracting(size..<Int64.max, from: $0.lostRanges[path])
                $0.shadows[path] = Self.cutting($0.shadows[path], at: Int(size))
                $0.droppedShadows[path] = Self.cutting($0.droppedShadows[path], at: Int(size))
            }
        }
    }

    package func dataSync(_ descriptor: Int32) throws {
        let fault = enter(.dataSync, path(of: descriptor) ?? "?")
        changes.lock()
        defer { changes.unlock() }
        if let fault {
            dropUnsyncedPages(descriptor)
            throw Self.failure(fault, "fdatasync")
        }
        if passesSyncsOn { try base.dataSync(descriptor) }
        markDurable(descriptor)
        if let path = path(of: descriptor) { record(.sync, path) }
    }

    package func fullSync(_ descriptor: Int32) throws {
        let fault = enter(.fullSync, path(of: descriptor) ?? "?")
        changes.lock()
        defer { changes.unlock() }
        if let fault {
            dropUnsyncedPages(descriptor)
            throw Self.failure(fault, "fsync")
        }
        if passesSyncsOn { try base.fullSync(descriptor) }
        markDurable(descriptor)
        if let path = path(of: descriptor) { record(.sync, path) }
    }

    /// What Linux does when writeback fails: the pages written since the last sync are marked clean
    /// and never reach the disk, though readers still see them until a power cut.
    private func dropUnsyncedPages(_ descriptor: Int32) {
        guard dropsPagesOnFailedSync, let path = path(of: descriptor), let size = try? base.size(descriptor) else {
            return
        }
        state.withLock {
            let durable = $0.durableLengths[path] ?? size
            if durable < size { $0.lostRanges[path, default: []].append(durable..<size) }
            for (page, content) in $0.shadows.removeValue(forKey: path) ?? [:] {
                $0.droppedShadows[path, default: [:]][page] = content
            }
        }
    }

    /// Shadow pages as a truncation to `size` leaves them.
    private static func cutting(_ pages: [Int: [UInt8]]?, at size: Int) -> [Int: [UInt8]]? {
        guard let pages else { return nil }
        var result: [Int: [UInt8]] = [:]
        for (page, content) in pages {
            let start = page * shadowPageSize
            guard start < size else { continue }
            result[page] = Array(content.prefix(size - start))
        }
        return result.isEmpty ? nil : result
    }

    private static func subtracting(_ removed: Range<Int64>, from ranges: [Range<Int64>]?) -> [Range<Int64>]? {
        guard let ranges else { return nil }
        var result: [Range<Int64>] = []
        for range in ranges {
            if range.lowerBound < removed.lowerBound {
                result.append(range.lowerBound..<min(range.upperBound, removed.lowerBound))
            }
            if range.upperBound > removed.upperBound {
                result.append(max(range.lowerBound, removed.upperBound)..<range.upperBound)
            }
        }
        return result.isEmpty ? nil : result
    }

    private func markDurable(_ descriptor: Int32) {
        guard let path = path(of: descriptor), let size = try? base.size(descriptor) else { return }
        state.withLock {
            $0.durableLengths[path] = size
            $0.shadows[path] = nil
        }
    }

    /// Before a write over bytes within the durable length, keeps the durable content of the pages
    /// it changes (the first time each changes since the last sync).
    private func keepDurableContent(_ descriptor: Int32, of range: Range<Int64>) {
        guard let path = path(of: descriptor) else { return }
        let pageSize = Self.shadowPageSize
        let durable = state.withLock { $0.durableLengths[path] } ?? 0
        guard range.lowerBound < durable, !range.isEmpty else { return }
        let first = Int(range.lowerBound) / pageSize
        let last = Int(min(range.upperBound, durable) - 1) / pageSize
        for page in first...last {
            let known = state.withLock { s -> Bool in
                if s.shadows[path]?[page] != nil { return true }
                // A page whose writeback failed is dirty again: its durable content is still the old one.
                if let dropped = s.droppedShadows[path]?.removeValue(forKey: page) {
                    s.shadows[path, default: [:]][page] = dropped
                    return true
                }
                return false
            }
            guard !known else { continue }
            let start = Int64(page * pageSize)
            let count = Int(min(Int64(pageSize), durable - start))
            var content = [UInt8](repeating: 0, count: count)
            let got = content.withUnsafeMutableBytes { try? base.read(descriptor, into: $0, at: start) }
            guard let got, got == count else { continue }
            state.withLock { if $0.shadows[path]?[page] == nil { $0.shadows[path, default: [:]][page] = content } }
        }
    }

    package func rename(_ source: String, to destination: String) throws {
        if let fault = enter(.rename, "\(source) -> \(destination)") {
            throw Self.failure(fault, "rename", destination)
        }
        changes.lock()
        defer { changes.unlock() }
        try base.rename(source, to: destination)
        record(.rename, source, to: destination)
        state.withLock {
            $0.durableLengths[destination] = $0.durableLengths.removeValue(forKey: source)
            $0.lostRanges[destination] = $0.lostRanges.removeValue(forKey: source)
            $0.shadows[destination] = $0.shadows.removeValue(forKey: source)
            $0.droppedShadows[destination] = $0.droppedShadows.removeValue(forKey: source)
        }
    }

    package func remove(_ path: String) throws {
        if let fault = enter(.remove, path) { throw Self.failure(fault, "unlink", path) }
        changes.lock()
        defer { changes.unlock() }
        try base.remove(path)
        record(.remove, path)
        state.withLock {
            $0.durableLengths[path] = nil
            $0.lostRanges[path] = nil
            $0.shadows[path] = nil
            $0.droppedShadows[path] = nil
        }
    }

    package func makeDirectory(_ path: String) throws {
        if let fault = enter(.makeDirectory, path) { throw Self.failure(fault, "mkdir", path) }
        try base.makeDirectory(path)
        record(.makeDirectory, path)
    }

    package func contentsOfDirectory(_ path: String) throws -> [String] {
        if let fault = enter(.contentsOfDirectory, path) { throw Self.failure(fault, "opendir", path) }
        return try base.contentsOfDirectory(path)
    }

    package func tryLock(_ descriptor: Int32) throws -> Bool {
        if let fault = enter(.tryLock, path(of: descriptor) ?? "?") { throw Self.failure(fault, "flock") }
        return try base.tryLock(descriptor)
    }

    // MARK: - Power loss

    /// Copies the store in `directory` to `target` as a power cut would leave it: every file this
    /// layer saw change keeps only the bytes that were synced. (Directory entries are taken as
    /// durable; the engine syncs its directory after every change of files.) Writes nothing when
    /// `directory` does not exist.
    package func writePowerLossImage(of directory: String, to target: String) throws {
        // No unsynced page reached the disk.
        try writePowerLossImage(of: directory, to: target) { _, _ in .zeros }
    }

    /// Copies the store in `directory` to `target` as a power cut would leave it when the operating
    /// system had written back only some of the bytes written since each file's last sync, a page at
    /// a time and in any order: the synced bytes are all there, and `unsyncedPage(name, page)` says
    /// what each page holding unsynced bytes became. A file keeps its full length when the page
    /// holding its end was not lost; otherwise it ends with the last page that was not lost, or at
    /// its synced length. Directory entries are taken as durable.
    package func writePowerLossImage(
        of directory: String, to target: String, pageSize: Int = 4096, unsyncedPage: (String, Int) -> UnsyncedPageFate
    ) throws {
        changes.lock()
        defer { changes.unlock() }
        let (durable, lost, shadows, dropped) = state.withLock {
            ($0.durableLengths, $0.lostRanges, $0.shadows, $0.droppedShadows)
        }
        let manager = FileManager.default
        guard manager.fileExists(atPath: directory) else { return }
        try manager.createDirectory(atPath: target, withIntermediateDirectories: true)
        for name in try manager.contentsOfDirectory(atPath: directory) {
            let source = directory + "/" + name
            let current = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
            let synced = min(current.count, Int(durable[source] ?? Int64(current.count)))
            var image = Array(current[..<synced])
            var fates: [Int: UnsyncedPageFate] = [:]
            func fate(of page: Int) -> UnsyncedPageFate {
                if let known = fates[page] { return known }
                let decided = unsyncedPage(name, page)
                fates[page] = decided
                return decided
            }
            // Synced bytes written over since the last sync: a page that did not reach the disk
            // holds what the last sync left there.
            for (shadowPage, content) in shadows[source] ?? [:] {
                let start = shadowPage * Self.shadowPageSize
                guard start < image.count else { continue }
                let page = start / pageSize
                let end = min(image.count, start + content.count)
                switch fate(of: page) {
                case .written: break
                case .zeros: image.replaceSubrange(start..<end, with: content[0..<(end - start)])
                case .garbage:
                    // Only the bytes written since the sync: the synced ones stay as they were.
                    for index in start..<end where image[index] != content[index - start] {
                        image[index] = UInt8(truncatingIfNeeded: (index &* 40_503) >> 5 ^ page)
                    }
                }
            }
            // Pages whose writeback failed hold what was there before, whatever came after.
            for (shadowPage, content) in dropped[source] ?? [:] {
                let start = shadowPage * Self.shadowPageSize
                guard start < image.count else { continue }
                let end = min(image.count, start + content.count)
                image.replaceSubrange(start..<end, with: content[0..<(end - start)])
            }
            var page = synced / pageSize
            while page * pageSize < current.count {
                let range = (page * pageSize)..<min(current.count, (page + 1) * pageSize)
                let fate = fate(of: page)
                page += 1
                // A lost page reads as zeros when a later one made the file longer.
                guard fate != .zeros else { continue }
                image += [UInt8](repeating: 0, count: range.upperBound - image.count)
                for index in max(range.lowerBound, synced)..<range.upperBound {
                    image[index] =
                        fate == .written
                        ? current[index] : UInt8(truncatingIfNeeded: (index &* 40_503) >> 5 ^ (page - 1))
                }
            }
            for range in lost[source] ?? [] where Int(range.lowerBound) < image.count {
                for index in Int(range.lowerBound)..<min(image.count, Int(range.upperBound)) { image[index] = 0 }
            }
            try Corruption.writeFile(target + "/" + name, image)
        }
    }
}

/// What became of one page of a file's unsynced bytes in a power cut (see
/// ``FaultInjectingFileSystem/writePowerLossImage(of:to:pageSize:unsyncedPage:)``).
package enum UnsyncedPageFate: Sendable, Hashable, CaseIterable {
    /// The page reached the disk with what was written.
    case written
    /// The page never reached the disk: its bytes appended since the last sync read as zeros, and
    /// bytes written over synced ones keep what the last sync left there.
    case zeros
    /// The disk holds something else there (a block reused without being cleared).
    case garbage
}

/// Holds calls of chosen kinds until released (``FaultInjectingFileSystem/hold(_:)``).
private final class CallGate: @unchecked Sendable {
    // @unchecked Sendable: both properties are read and written with `condition` locked.
    private let condition = NSCondition()
    private var held: Set<IOCallKind> = []
    private var waiting = 0

    func hold(_ kinds: Set<IOCallKind>) {
        condition.lock()
        held = kinds
        condition.unlock()
    }

    func release() {
        condition.lock()
        held = []
        condition.broadcast()
        condition.unlock()
    }

    func pass(_ kind: IOCallKind) {
        condition.lock()
        defer { condition.unlock() }
        guard held.contains(kind) else { return }
        waiting += 1
        condition.broadcast()
        while held.contains(kind) { condition.wait() }
        waiting -= 1
    }

    func waitForHeldCall(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting == 0 && condition.wait(until: deadline) {}
        return waiting > 0
    }
}
