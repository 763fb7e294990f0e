extension CoChannel {
  /// A channel fed with the elements of `sequence`, for moving from Swift concurrency (and
  /// swift-async-algorithms) to channels one stage at a time.
  ///
  /// ```swift
  /// let lines = CoChannel(consuming: file.bytes.lines)   // an AsyncSequence of String
  /// DispatchQueue.main.startCoroutine {
  ///   for line in lines.makeIterator() { show(line) }
  /// }
  /// ```
  ///
  /// A `Task` iterates `sequence` and sends each element, waiting while the channel cannot take
  /// it (the channel's back-pressure reaches the sequence). When the sequence ends the channel
  /// is closed; when it throws, the channel is **cancelled** (its consumers learn that the
  /// stream failed; a channel has no way to carry the error itself). Cancelling the channel,
  /// or releasing it, cancels the task. The other way round, every receiver is already an
  /// `AsyncSequence` (`for await element in receiver`).
  public convenience init<Source: AsyncSequence & Sendable>(
    consuming sequence: Source, bufferType: BufferType = .buffered(capacity: 1)
  ) where Source.Element == Element {
    self.init(bufferType: bufferType)
    // The task holds the channel weakly: its consumers' release cancels it.
    let task = Task { [weak self] in
      do {
        for try await element in sequence {
          guard let channel = self else { return }
          try await channel.send(fromTask: element)
        }
        self?.close()
      } catch {
        self?.cancel()  // a channel cancelled already stays as it is
      }
    }
    whenCanceled { task.cancel() }
  }

  /// Sends `element` from a task: at once if the channel can take it, else through a
  /// coroutine that waits for room (the task waits for it, without blocking a thread).
  private func send(fromTask element: Element) async throws {
    switch performNow(SendOperation(element)) {
    case .success?: return
    case .failure(let error)?: throw error
    case nil: break
    }
    let pending = UncheckedSendable(element)
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      Coroutine.start(name: "Covenant.consuming") {
        do {
          try self.awaitSend(pending.value)
          continuation.resume()
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
  }
}
