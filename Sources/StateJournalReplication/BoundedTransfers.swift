import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The URL session delegate of an ``S3Client``: it reads each response body into memory only up to
/// the limit its request set, cancelling the transfer as soon as the server sends more (or declares
/// more in `Content-Length`), and it follows no redirect, so that signed requests and their
/// credentials never go to an origin other than the configured endpoint.
final class BoundedTransfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: the URL session calls the delegate on its own queue while requests are
    // started from tasks; every stored property is read and written under `lock`.

    /// A transfer's outcome.
    enum Outcome {
        case response(HTTPURLResponse, Data)
        case failed(any Error)
        case tooLarge(limit: Int)
    }

    private final class Transfer {
        let limit: Int
        let completion: (Outcome) -> Void
        var response: HTTPURLResponse?
        var body = Data()
        var exceeded = false
        init(limit: Int, completion: @escaping (Outcome) -> Void) {
            self.limit = limit
            self.completion = completion
        }
    }

    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]

    /// Sends `request` on `session` (whose delegate is `self`) and returns its response, reading at
    /// most `limit` bytes of body; cancelling the calling task cancels the transfer.
    func send(_ request: URLRequest, on session: URLSession, limit: Int) async throws -> Outcome {
        let task = session.dataTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
                lock.withLock {
                    transfers[task.taskIdentifier] = Transfer(limit: limit) { continuation.resume(returning: $0) }
                }
                task.resume()
            }
        } onCancel: {
            task.cancel()
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
        }
        completionHandler(over ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask) else { return }
        let over: Bool = lock.withLock {
            guard !transfer.exceeded else { return false }
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
        } else if let error {
            transfer.completion(.failed(error))
        } else if let response = transfer.response ?? task.response as? HTTPURLResponse {
            transfer.completion(.response(response, transfer.body))
        } else {
            transfer.completion(.failed(URLError(.badServerResponse)))
        }
    }
}
