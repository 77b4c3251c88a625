import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The URL session delegate of an ``S3Client``: it reads each response body into memory only up to
/// the limit its request set, cancelling the transfer as soon as the server sends more (or declares
/// more in `Content-Length`); it cancels a transfer whose response comes more slowly than its
/// ``MinimumTransferRate``; and it follows no redirect, so that signed requests and their
/// credentials never go to an origin other than the configured endpoint.
final class BoundedTransfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: the URL session calls the delegate on its own queue while requests are
    // started from tasks; every stored property is read and written under `lock`.

    /// A transfer's outcome.
    enum Outcome {
        case response(HTTPURLResponse, Data)
        case failed(any Error)
        case tooLarge(limit: Int)
        /// The response came more slowly than the minimum rate: `received` body bytes in `seconds`,
        /// of the `expected` its `Content-Length` declared (when it did).
        case tooSlow(received: Int64, seconds: Double, expected: Int64?)
    }

    private final class Transfer {
        let limit: Int
        let completion: (Outcome) -> Void
        var response: HTTPURLResponse?
        var body = Data()
        var exceeded = false
        /// Body bytes received so far.
        var received: Int64 = 0
        /// The body size the response declared, when it did.
        var expected: Int64?
        /// When the rate is measured from: the request's start, or (for an upload) its response's.
        var measuredFrom: ContinuousClock.Instant?
        /// When the transfer must be complete: the window plus the expected size at the minimum rate.
        var deadline: ContinuousClock.Instant?
        /// `received` at each check within the last window, oldest first.
        var samples: [(time: ContinuousClock.Instant, received: Int64)] = []
        /// Set when the transfer was cancelled for its rate: bytes received and seconds taken.
        var tooSlow: (received: Int64, seconds: Double)?
        init(limit: Int, completion: @escaping (Outcome) -> Void) {
            self.limit = limit
            self.completion = completion
        }
    }

    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]
    private let minimumRate: MinimumTransferRate

    init(minimumRate: MinimumTransferRate) {
        self.minimumRate = minimumRate
    }

    /// Sends `request` on `session` (whose delegate is `self`) and returns its response, reading at
    /// most `limit` bytes of body; cancelling the calling task cancels the transfer, and so does a
    /// response slower than the minimum rate.
    func send(_ request: URLRequest, on session: URLSession, limit: Int) async throws -> Outcome {
        let task = session.dataTask(with: request)
        let identifier = task.taskIdentifier
        // A request without a body is measured from its start: a server that takes its time with
        // the headers is as slow as one that drips the body. An upload is measured from its response.
        let measuredFromStart = request.httpBody?.isEmpty ?? true
        let watchdog: Task<Void, Never>? =
            minimumRate.bytesPerSecond > 0
            ? Task { [weak self, minimumRate] in
                let tick = min(Duration.seconds(1), minimumRate.window / 4)
                while true {
                    do { try await Task.sleep(for: tick) } catch { return }
                    guard let self else { return }
                    if self.isTooSlow(identifier) {
                        task.cancel()
                        return
                    }
                }
            } : nil
        defer { watchdog?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
                let transfer = Transfer(limit: limit) { continuation.resume(returning: $0) }
                if measuredFromStart { startMeasuring(transfer, expected: Int64(limit)) }
                lock.withLock { transfers[identifier] = transfer }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// Starts the window and the deadline of `transfer`, which expects at most `expected` bytes.
    private func startMeasuring(_ transfer: Transfer, expected: Int64) {
        guard minimumRate.bytesPerSecond > 0 else { return }
        let now = ContinuousClock.now
        transfer.measuredFrom = now
        transfer.samples = [(now, transfer.received)]
        setDeadline(transfer, expected: expected)
    }

    private func setDeadline(_ transfer: Transfer, expected: Int64) {
        guard let start = transfer.measuredFrom else { return }
        let seconds = Double(max(expected, 0)) / Double(minimumRate.bytesPerSecond)
        transfer.deadline = start + minimumRate.window + .seconds(min(seconds, 1e9))
    }

    /// Whether the transfer `identifier` has fallen below the minimum rate over the last window, or
    /// is past its deadline; marks it so when it has.
    private func isTooSlow(_ identifier: Int) -> Bool {
        lock.withLock {
            guard let transfer = transfers[identifier], let start = transfer.measuredFrom, transfer.tooSlow == nil
            else { return false }
            let now = ContinuousClock.now
            transfer.samples.append((now, transfer.received))
            let windowStart = now - minimumRate.window
            // Keep the newest sample at or before the window's start, and every one after it.
            while transfer.samples.count >= 2, transfer.samples[1].time <= windowStart {
                transfer.samples.removeFirst()
            }
            let oldest = transfer.samples[0]
            let slow =
                oldest.time <= windowStart
                && Double(transfer.received - oldest.received)
                    < Double(minimumRate.bytesPerSecond) * minimumRate.windowSeconds
            let late = transfer.deadline.map { now > $0 } ?? false
            guard slow || late else { return false }
            let taken = now - start
            transfer.tooSlow = (
                transfer.received,
                Double(taken.components.seconds) + Double(taken.components.attoseconds) / 1e18
            )
            return true
        }
    }

    private func transfer(_ task: URLSessionTask) -> Transfer? {
        lock.withLock { transfers[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = transfer(dataTask) else { return completionHandler(.cancel) }
        let declared = response.expectedContentLength
        let over = declared > Int64(transfer.limit)
        lock.withLock {
            transfer.response = response as? HTTPURLResponse
            transfer.exceeded = over
            if declared >= 0 { transfer.expected = declared }
            if transfer.measuredFrom == nil {
                startMeasuring(transfer, expected: declared >= 0 ? declared : Int64(transfer.limit))
            } else if declared >= 0 {
                setDeadline(transfer, expected: declared)
            }
        }
        completionHandler(over ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask) else { return }
        let over: Bool = lock.withLock {
            guard !transfer.exceeded else { return false }
            transfer.received += Int64(data.count)
            if transfer.body.count + data.count > transfer.limit {
                transfer.exceeded = true
                transfer.body = Data()
                return true
            }
            transfer.body.append(data)
            return false
        }
        if over { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // The redirect response itself is the answer: no request is sent anywhere else.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = lock.withLock({ transfers.removeValue(forKey: task.taskIdentifier) }) else { return }
        if transfer.exceeded {
            transfer.completion(.tooLarge(limit: transfer.limit))
        } else if let slow = lock.withLock({ transfer.tooSlow }) {
            transfer.completion(.tooSlow(received: slow.received, seconds: slow.seconds, expected: transfer.expected))
        } else if let error {
            transfer.completion(.failed(error))
        } else if let response = transfer.response ?? task.response as? HTTPURLResponse {
            transfer.completion(.response(response, transfer.body))
        } else {
            transfer.completion(.failed(URLError(.badServerResponse)))
        }
    }
}
