import CCoroutineContext
import Dispatch

/// How a snapshot turns what the registry recorded into words: wait kinds with their detail,
/// schedulers, start files. Each distinct type, scheduler and file is described once per
/// snapshot (describing a type costs microseconds; a snapshot may list 100,000 coroutines).
final class CoroutineSnapshotDescriptions {
  private var typeNames: [UInt: String] = [:]
  private var schedulers: [UInt: String] = [:]
  private var files: [UInt: String] = [:]

  /// The wait recorded as `kind` with `detail` (a type's metadata, or a delay's deadline in
  /// uptime nanoseconds).
  func wait(kind: CoroutineWaitKind, detail: UInt) -> CoroutineInfo.Wait? {
    switch kind {
    case .none: return nil
    case .resolution: return .future(type: typeName(detail))
    case .channelReceive: return .channelReceive(channel: typeName(detail))
    case .channelSend: return .channelSend(channel: typeName(detail))
    case .select: return .select
    case .delay:
      return .delay(deadline: DispatchTime(uptimeNanoseconds: UInt64(detail)))
    case .callback: return .callback(valueType: typeName(detail))
    case .asyncBridge: return .asyncOperation(resultType: typeName(detail))
    case .mutex: return .mutex
    case .semaphore: return .semaphore
    case .join: return .join
    case .yield: return .yield
    case .hop: return .hop
    case .sharedStack: return .sharedStack
    case .generatorYield: return .generatorYield(elementType: typeName(detail))
    }
  }

  /// The name of the type whose metadata `bits` is (the registry's detail word of typed waits:
  /// always a metatype stored by the waiting code, or 0).
  func typeName(_ bits: UInt) -> String {
    guard bits != 0 else { return "?" }
    if let known = typeNames[bits] { return known }
    let name = String(describing: unsafeBitCast(bits, to: Any.Type.self))  // see metadataBits
    typeNames[bits] = name
    return name
  }

  /// The text of a start file (`nil` when the start recorded none: line 0).
  func file(_ file: StaticString?, line: UInt32) -> String? {
    guard let file, line != 0 else { return nil }
    guard file.hasPointerRepresentation else { return file.description }
    let key = UInt(bitPattern: file.utf8Start)
    if let known = files[key] { return known }
    let text = file.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    files[key] = text
    return text
  }

  /// `queue "label"`, a description of another scheduler, or `immediate`.
  func scheduler(_ record: RawCoroutineRecord) -> String {
    if let queue = record.queue {
      let key = queue.unsafeWord
      if let known = schedulers[key] { return known }
      let label = queue.borrow { $0.label }
      let text = label.isEmpty ? "an unlabelled queue" : "queue \"\(label)\""
      schedulers[key] = text
      return text
    }
    if let object = record.schedulerObject {
      let key = object.unsafeWord
      if let known = schedulers[key] { return known }
      let text = object.borrow { object -> String in
        if let described = object as? any CoroutineSchedulerDescribing {
          return described.coroutineSchedulerDescription
        }
        return String(describing: type(of: object))
      }
      schedulers[key] = text
      return text
    }
    return "immediate"
  }
}

/// A scheduler that names itself in coroutine snapshots and dumps (a dispatch queue shows its
/// label; other schedulers show their type name unless they adopt this).
///
/// ```swift
/// extension MyExecutor: CoroutineSchedulerDescribing {
///   var coroutineSchedulerDescription: String { "executor \(name)" }
/// }
/// ```
public protocol CoroutineSchedulerDescribing: AnyObject {
  /// A short description, e.g. `event loop "NIO-ELT-0-#1"`. Called from the thread that takes
  /// the snapshot.
  var coroutineSchedulerDescription: String { get }
}
