import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Standard output that is closed, or that fails, while a command streams to it.
struct StandardOutputError: Error, CustomStringConvertible {
    var errno: Int32

    var description: String {
        "standard output failed (\(String(cString: strerror(errno)))); the reader of this command's output went away"
    }
}

/// Writes straight to a standard stream's descriptor, whole, so that a line a kill follows is not
/// lost in a buffer: retries after interruptions, waits while a pipe is full, and throws instead of
/// trapping when the reader is gone.
enum StandardStream {
    /// Readies the standard streams before a command opens any file: a write to a pipe nobody
    /// reads fails with `EPIPE` instead of killing the process, and a standard stream the command
    /// was started without is opened on `/dev/null`, so that no store file the command opens can
    /// take its descriptor number and receive its output.
    ///
    /// - Returns: Whether standard output was open when the command started.
    @discardableResult
    static func prepare() -> Bool {
        signal(SIGPIPE, SIG_IGN)
        var outputWasOpen = true
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 {
            if descriptor == STDOUT_FILENO { outputWasOpen = false }
            let null = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if null >= 0 && null != descriptor {
                dup2(null, descriptor)
                close(null)
            }
        }
        return outputWasOpen
    }

    /// Writes `text` to standard output.
    ///
    /// - Throws: ``StandardOutputError`` when the stream is closed or fails.
    static func write(_ text: String) throws { try write(text, to: STDOUT_FILENO) }

    /// Writes `text` to standard error, ignoring a failure: there is nowhere left to report it.
    static func writeError(_ text: String) { try? write(text, to: STDERR_FILENO) }

    private static func write(_ text: String, to descriptor: Int32) throws {
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(descriptor, base + done, buffer.count - done)
            }
            if count > 0 {
                done += count
                continue
            }
            let code = count < 0 ? errno : EIO
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, 1000)
                continue
            }
            throw StandardOutputError(errno: code)
        }
    }
}
