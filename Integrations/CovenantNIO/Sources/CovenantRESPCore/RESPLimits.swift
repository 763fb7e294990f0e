/// The protocol limits both servers enforce, Redis's own: a peer that sends more gets a
/// protocol error and is disconnected, as by `redis-server`.
public enum RESPLimits {
  /// The longest bulk string (Redis's `proto-max-bulk-len`, 512 MB).
  public static let maximumBulkLength = 512 * 1024 * 1024
  /// The most arguments in one command (Redis's multibulk limit, 1,048,576).
  public static let maximumArguments = 1024 * 1024
  /// The longest header or inline-command line (Redis's inline limit, 64 KiB).
  public static let maximumLineLength = 64 * 1024
  /// The bytes of replies and published messages a subscribed connection may have waiting to be
  /// written before it is disconnected (Redis's `client-output-buffer-limit pubsub 32mb`).
  public static let maximumPendingPushBytes = 32 * 1024 * 1024
}
