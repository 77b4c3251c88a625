import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The signal handlers behind ``Journal/armCrashNote(_:)``.
///
/// Each armed note has a slot of its own: the thread that armed it, the descriptor of its file and
/// its bytes, so that journals armed on several threads at once each keep theirs. The handlers are
/// installed while any note is armed. A handler runs in a process that is crashing, so it touches
/// only memory allocated once and laid out when the notes were armed, and calls only
/// async-signal-safe functions (`pthread_self`, which reads the thread pointer, `pwrite`,
/// `sigaction`, `raise`): no allocation, no reference counting, no lock. Arming and disarming take
/// a lock; the handler never does.
enum CrashSignals {
    /// The signals a crash raises: a Swift trap (`SIGILL` on x86-64, `SIGTRAP` on ARM), a bad
    /// access, an abort, an arithmetic fault.
    static let signals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]
    /// The most bytes a note holds.
    static let capacity = 512
    /// How many notes can be armed at once, on as many threads.
    static let slots = 32

    /// A slot: descriptor (Int32, -1 when free), note length (Int32), signal offset (Int32),
    /// padding, the armed thread (`pthread_t`, 8 bytes), then the note's bytes.
    private static let slotHeader = 24
    private static let slotSize = slotHeader + capacity
    /// The slots, then the handlers in place before arming, one `sigaction` per signal in
    /// ``signals``' order.
    nonisolated(unsafe) private static var block: UnsafeMutableRawPointer? = {
        let size = slots * slotSize + MemoryLayout<sigaction>.stride * 6
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        for slot in 0..<slots { block.storeBytes(of: -1, toByteOffset: slot * slotSize, as: Int32.self) }
        return block
    }()
    nonisolated(unsafe) private static var armedCount = 0
    private static let lock = NSLock()

    private static var previousActions: UnsafeMutablePointer<sigaction> {
        (block! + slots * slotSize).assumingMemoryBound(to: sigaction.self)
    }

    /// Arms a note on the calling thread: until ``disarm(slot:)``, a crash signal on this thread
    /// writes `note`, with its byte at `signalOffset` replaced by the signal's number, to
    /// `descriptor` at offset 0. Returns the note's slot, or the `errno` of the failure (`EBUSY`
    /// when every slot is taken, or why a handler could not be installed).
    static func arm(descriptor: Int32, note: [UInt8], signalOffset: Int) -> Result<Int, SystemError> {
        precondition(note.count <= capacity)
        lock.lock()
        defer { lock.unlock() }
        let block = block!
        guard let slot = (0..<slots).first(where: { block.load(fromByteOffset: $0 * slotSize, as: Int32.self) < 0 })
        else { return .failure(SystemError(call: "armCrashNote", errno: EBUSY, path: nil)) }
        let base = block + slot * slotSize
        base.storeBytes(of: Int32(note.count), toByteOffset: 4, as: Int32.self)
        base.storeBytes(of: Int32(signalOffset), toByteOffset: 8, as: Int32.self)
        base.storeBytes(of: UInt64(pthread_self()), toByteOffset: 16, as: UInt64.self)
        note.withUnsafeBytes { (base + slotHeader).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        if armedCount == 0 {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = crashSignalHandler
            action.sa_flags = SA_SIGINFO | SA_ONSTACK
            sigemptyset(&action.sa_mask)
            for (index, signal) in signals.enumerated() where sigaction(signal, &action, previousActions + index) != 0 {
                let failure = errno
                for undo in 0..<index { sigaction(signals[undo], previousActions + undo, nil) }
                return .failure(SystemError(call: "sigaction", errno: failure, path: nil))
            }
        }
        armedCount += 1
        base.storeBytes(of: descriptor, toByteOffset: 0, as: Int32.self)
        return .success(slot)
    }

    /// Frees the note's slot; the last one armed puts back the handlers in place before arming,
    /// where ours is still installed.
    static func disarm(slot: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard let block, (0..<slots).contains(slot), block.load(fromByteOffset: slot * slotSize, as: Int32.self) >= 0
        else { return }
        block.storeBytes(of: -1, toByteOffset: slot * slotSize, as: Int32.self)
        armedCount -= 1
        guard armedCount == 0 else { return }
        for (index, signal) in signals.enumerated() {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0, current.sa_flags & SA_SIGINFO != 0,
                let handler = current.__sigaction_handler.sa_sigaction,
                unsafeBitCast(handler, to: UnsafeRawPointer.self)
                    == unsafeBitCast(crashSignalHandler, to: UnsafeRawPointer.self)
            else { continue }
            sigaction(signal, previousActions + index, nil)
        }
    }

    /// The handler: writes the note armed on the crashing thread, if any, puts back the handler in
    /// place before arming, and raises the signal again, which that handler (or the default
    /// action) receives as this one returns.
    static let crashSignalHandler:
        @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void = {
            signal, _, _ in
            let savedErrno = errno
            guard let block = CrashSignals.block else { return }
            let thread = UInt64(pthread_self())
            var slot = 0
            while slot < slots {
                let base = block + slot * slotSize
                let descriptor = base.load(fromByteOffset: 0, as: Int32.self)
                if descriptor >= 0 && base.load(fromByteOffset: 16, as: UInt64.self) == thread {
                    base.storeBytes(of: -1, toByteOffset: 0, as: Int32.self)
                    let count = Int(base.load(fromByteOffset: 4, as: Int32.self))
                    let signalOffset = Int(base.load(fromByteOffset: 8, as: Int32.self))
                    let note = base + slotHeader
                    if signalOffset < count {
                        note.storeBytes(
                            of: UInt8(truncatingIfNeeded: signal), toByteOffset: signalOffset, as: UInt8.self)
                    }
                    var written = 0
                    while written < count {
                        let result = pwrite(descriptor, note + written, count - written, off_t(written))
                        if result <= 0 { break }
                        written += result
                    }
                }
                slot += 1
            }
            // The position of `signal` in ``signals``, without reading the array.
            let index: Int
            switch signal {
            case SIGSEGV: index = 0
            case SIGBUS: index = 1
            case SIGILL: index = 2
            case SIGTRAP: index = 3
            case SIGABRT: index = 4
            case SIGFPE: index = 5
            default: index = -1
            }
            if index >= 0 {
                sigaction(signal, (block + slots * slotSize).assumingMemoryBound(to: sigaction.self) + index, nil)
            }
            raise(signal)
            errno = savedErrno
        }
}
