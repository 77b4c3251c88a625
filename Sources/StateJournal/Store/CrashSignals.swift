#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The signal handlers behind ``Journal/armCrashNote(_:)``.
///
/// The handler runs in a process that is crashing, so it touches only memory allocated when the
/// note was armed and calls only async-signal-safe functions (`pthread_self`, `pwrite`, `sigaction`,
/// `raise`): no allocation, no reference counting, no lock. What it reads is laid out in one block
/// of raw memory, written before the handlers are installed.
enum CrashSignals {
    /// The signals a crash raises: a Swift trap (`SIGILL` on x86-64, `SIGTRAP` on ARM), a bad
    /// access, an abort, an arithmetic fault.
    static let signals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]
    /// The most bytes a note holds.
    static let capacity = 512

    /// The block the handler reads: descriptor (Int32, -1 when disarmed), note length (Int32),
    /// signal offset (Int32), padding, the armed thread (`pthread_t`, 8 bytes), then the note's
    /// bytes, then the handlers in place before arming, one `sigaction` per signal in ``signals``'
    /// order.
    private static let headerSize = 24
    nonisolated(unsafe) private static var block: UnsafeMutableRawPointer? = nil
    nonisolated(unsafe) private static var armed = false

    private static var previousActions: UnsafeMutablePointer<sigaction> {
        (block! + headerSize + capacity).assumingMemoryBound(to: sigaction.self)
    }

    /// Installs the handlers: until ``disarm()``, a crash signal on the calling thread writes
    /// `note`, with its byte at `signalOffset` replaced by the signal's number, to `descriptor` at
    /// offset 0. Returns `errno` when a handler could not be installed (none stays installed).
    static func arm(descriptor: Int32, note: [UInt8], signalOffset: Int) -> Int32? {
        precondition(note.count <= capacity)
        disarm()
        if block == nil {
            let size = headerSize + capacity + MemoryLayout<sigaction>.stride * signals.count
            block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        }
        let block = block!
        block.storeBytes(of: -1, toByteOffset: 0, as: Int32.self)
        block.storeBytes(of: Int32(note.count), toByteOffset: 4, as: Int32.self)
        block.storeBytes(of: Int32(signalOffset), toByteOffset: 8, as: Int32.self)
        block.storeBytes(of: UInt64(pthread_self()), toByteOffset: 16, as: UInt64.self)
        note.withUnsafeBytes { (block + headerSize).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = crashSignalHandler
        action.sa_flags = SA_SIGINFO | SA_ONSTACK
        sigemptyset(&action.sa_mask)
        for (index, signal) in signals.enumerated() where sigaction(signal, &action, previousActions + index) != 0 {
            let failure = errno
            for undo in 0..<index { sigaction(signals[undo], previousActions + undo, nil) }
            return failure
        }
        armed = true
        block.storeBytes(of: descriptor, toByteOffset: 0, as: Int32.self)
        return nil
    }

    /// Puts back the handlers in place before ``arm(descriptor:note:signalOffset:)``, where ours
    /// is still installed.
    static func disarm() {
        guard armed, let block else { return }
        block.storeBytes(of: -1, toByteOffset: 0, as: Int32.self)
        for (index, signal) in signals.enumerated() {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0, current.sa_flags & SA_SIGINFO != 0,
                let handler = current.__sigaction_handler.sa_sigaction,
                unsafeBitCast(handler, to: UnsafeRawPointer.self)
                    == unsafeBitCast(crashSignalHandler, to: UnsafeRawPointer.self)
            else { continue }
            sigaction(signal, previousActions + index, nil)
        }
        armed = false
    }

    /// The handler: writes the note when the signal came on the armed thread, puts back the
    /// handler in place before arming, and raises the signal again, which that handler (or the
    /// default action) receives as this one returns.
    static let crashSignalHandler:
        @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void = {
            signal, _, _ in
            let savedErrno = errno
            guard let block = CrashSignals.block else { return }
            let descriptor = block.load(fromByteOffset: 0, as: Int32.self)
            // `pthread_self` reads the thread pointer: safe in a handler on glibc and musl.
            if descriptor >= 0 && block.load(fromByteOffset: 16, as: UInt64.self) == UInt64(pthread_self()) {
                block.storeBytes(of: -1, toByteOffset: 0, as: Int32.self)
                let count = Int(block.load(fromByteOffset: 4, as: Int32.self))
                let signalOffset = Int(block.load(fromByteOffset: 8, as: Int32.self))
                let note = block + headerSize
                if signalOffset < count {
                    note.storeBytes(of: UInt8(truncatingIfNeeded: signal), toByteOffset: signalOffset, as: UInt8.self)
                }
                var written = 0
                while written < count {
                    let result = pwrite(descriptor, note + written, count - written, off_t(written))
                    if result <= 0 { break }
                    written += result
                }
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
                sigaction(signal, (block + headerSize + capacity).assumingMemoryBound(to: sigaction.self) + index, nil)
            }
            raise(signal)
            errno = savedErrno
        }
}
