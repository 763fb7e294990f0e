/// What a chaining block decided for the derived promise.
@usableFromInline
enum ChainOutcome<Value> {
  case fulfill(Value)
  case reject(any Error)
  case adopt(Promise<Value>)
}
