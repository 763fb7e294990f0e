import CovenantCore
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// SwiftCoroutine's `URLSession` futures, with cancellation that reaches the task.
///
/// Each call creates the task, resumes it, and returns a future of its outcome. The task is
/// cancelled (the connection closed, the download or upload stopped) when:
/// - the future is cancelled (`cancel()`), directly or through a `CoScope` it was added to;
/// - the coroutine that called it is cancelled (by its scope, its own future, …): the task is
///   cancelled once that coroutine has ended, which a cancelled coroutine does at its next
///   await — typically the `await()` of this very future. Called in a coroutine that is already
///   cancelled, it sends nothing and returns a future failed with `CoFutureError.canceled`.
///
/// ```swift
/// let scope = CoScope()
/// DispatchQueue.global().startCoroutine(in: scope) {
///   let (data, response) = try URLSession.shared.dataTaskFuture(for: url).await()
///   print((response as? HTTPURLResponse)?.statusCode ?? 0, data.count)
/// }
/// scope.cancel()     // Ctrl-C: the request stops too, not only the coroutine
/// ```
///
/// The future holds the task until it completes, and the task's completion handler holds the
/// future: a future nobody else keeps still completes (`whenComplete` callbacks run), as with
/// SwiftCoroutine. Errors are URLSession's (`URLError`); a cancelled future fails with
/// `CoFutureError.canceled`. On Linux these come from FoundationNetworking.
extension URLSession {
  /// What `dataTaskFuture` and `uploadTaskFuture` complete with: the body and the response.
  public typealias DataResponse = (data: Data, response: URLResponse)

  /// What `downloadTaskFuture` completes with: where the downloaded file now is, and the
  /// response.
  public typealias DownloadResponse = (url: URL, response: URLResponse)

  /// Loads `url` (a GET with the session's configuration); see the extension's description for
  /// cancellation.
  public func dataTaskFuture(for url: URL) -> CoFuture<DataResponse> {
    dataTaskFuture(for: URLRequest(url: url))
  }

  /// Sends `request` and completes with the response's body and the response (any status code:
  /// a 404 is a response, not an error); see the extension's description for cancellation.
  public func dataTaskFuture(for request: URLRequest) -> CoFuture<DataResponse> {
    taskFuture { complete in
      dataTask(with: request) { data, response, error in
        complete(Self.dataResponse(data, response, error))
      }
    }
  }

  /// Downloads `url` to a file; see `downloadTaskFuture(for:)` with a request.
  public func downloadTaskFuture(for url: URL) -> CoFuture<DownloadResponse> {
    downloadTaskFuture(for: URLRequest(url: url))
  }

  /// Downloads what `request` returns to a file, and completes with that file's URL and the
  /// response.
  ///
  /// URLSession deletes its temporary file when its completion handler returns, so the file is
  /// first moved to a new file of the temporary directory (`CovenantDownload-<UUID>`), which
  /// belongs to the caller: move it or delete it. See the extension's description for
  /// cancellation.
  public func downloadTaskFuture(for request: URLRequest) -> CoFuture<DownloadResponse> {
    taskFuture { complete in
      downloadTask(with: request) { location, response, error in
        complete(Self.downloadResponse(location, response, error))
      }
    }
  }

  /// Sends `request` with `bodyData` as its body (a POST unless the request says otherwise)
  /// and completes with the response's body and the response; see the extension's description
  /// for cancellation.
  public func uploadTaskFuture(for request: URLRequest, from bodyData: Data) -> CoFuture<
    DataResponse
  > {
    taskFuture { complete in
      uploadTask(with: request, from: bodyData) { data, response, error in
        complete(Self.dataResponse(data, response, error))
      }
    }
  }

  /// Sends `request` with the contents of `fileURL` as its body and completes with the
  /// response's body and the response; see the extension's description for cancellation.
  public func uploadTaskFuture(
    for request: URLRequest, fromFile fileURL: URL
  ) -> CoFuture<DataResponse> {
    taskFuture { complete in
      uploadTask(with: request, fromFile: fileURL) { data, response, error in
        complete(Self.dataResponse(data, response, error))
      }
    }
  }

  /// The one shape of every task future: the promise is completed by the task's handler, and
  /// cancelling it (or the calling coroutine) cancels the task. The handler is set, and the
  /// cancellation hooked, before the task starts.
  private func taskFuture<Value>(
    _ makeTask: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> URLSessionTask
  ) -> CoFuture<Value> {
    // In a cancelled coroutine, as its awaits throw at once, no request is sent at all.
    if Coroutine.isCanceled { return CoFuture(result: .failure(CoFutureError.canceled)) }
    let promise = CoPromise<Value>()
    let task = UncheckedSendable(makeTask { promise.complete(with: $0) })
    promise.whenCanceled { task.value.cancel() }
    promise.cancelWhenCurrentCoroutineIsCanceled()
    task.value.resume()
    return promise
  }

  private static func dataResponse(
    _ data: Data?, _ response: URLResponse?, _ error: (any Error)?
  ) -> Result<DataResponse, any Error> {
    if let error { return .failure(error) }
    guard let response else { return .failure(URLError(.badServerResponse)) }
    return .success((data ?? Data(), response))
  }

  private static func downloadResponse(
    _ location: URL?, _ response: URLResponse?, _ error: (any Error)?
  ) -> Result<DownloadResponse, any Error> {
    if let error { return .failure(error) }
    guard let location, let response else { return .failure(URLError(.badServerResponse)) }
    let kept = FileManager.default.temporaryDirectory
      .appendingPathComponent("CovenantDownload-\(UUID().uuidString)")
    do {
      try FileManager.default.moveItem(at: location, to: kept)
    } catch {
      return .failure(error)
    }
    return .success((kept, response))
  }
}
