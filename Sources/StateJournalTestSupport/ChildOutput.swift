import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension FileHandle {
    /// Reads until the end of the file, retrying a read that a signal interrupted.
    ///
    /// Foundation's `readDataToEndOfFile()` stops the process when a read fails with `EINTR`, which
    /// a test process that runs children and sanitizers sees from time to time.
    public func readToEndOfFile() -> Data {
        var data = Data()
        while true {
            let chunk = readAvailable()
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }

    /// Reads what is available now, at least one byte, or nothing at the end of the file; retries
    /// a read that a signal interrupted (see ``readToEndOfFile()``).
    public func readAvailable() -> Data {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return Data() }
        }
    }
}

/// Reads a child's standard output and standard error to their ends at once, so that a child
/// filling one pipe never waits on a parent reading the other.
public func readBoth(_ output: FileHandle, _ error: FileHandle) -> (output: Data, error: Data) {
    let errorData = Locked(Data())
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        errorData.withLock { $0 = error.readToEndOfFile() }
        done.signal()
    }
    let outputData = output.readToEndOfFile()
    done.wait()
    return (outputData, errorData.withLock { $0 })
}

/// What a child process that ran to completion printed, and how it ended.
public struct ChildResult: Sendable {
    /// Its exit status.
    public var status: Int32
    /// What it wrote to standard output.
    public var standardOutput: String
    /// What it wrote to standard error.
    public var standardError: String
}

/// Runs `executable` with `arguments` to completion, reading both its outputs (see ``readBoth(_:_:)``).
public func runChild(_ executable: URL, _ arguments: [String]) throws -> ChildResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let (outputData, errorData) = readBoth(output.fileHandleForReading, error.fileHandleForReading)
    process.waitUntilExit()
    return ChildResult(
        status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData, as: UTF8.self))
}
