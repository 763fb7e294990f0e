// The umbrella module: `import Covenant` gives everything google/promises and SwiftCoroutine
// clients had — the Foundation-free core (promises, coroutines, futures, channels, scopes,
// generators, actors, the Swift concurrency bridges) and the Foundation pieces (`RunLoop` and
// `OperationQueue` schedulers, `waitForPromises`, `NSError` bridging). A server that must not
// load Foundation imports `CovenantCore` instead (see Architecture.md, "Modules").
@_exported import CovenantCore
@_exported import CovenantFoundation
