// The umbrella module: `import Covenant` gives everything google/promises and SwiftCoroutine
// clients had — the Foundation-free core (promises, coroutines, futures, channels, scopes,
// generators, actors, the Swift concurrency bridges) and the Foundation pieces (`RunLoop` and
// `OperationQueue` schedulers, `waitForPromises`, `NSError` bridging). A server that must not
// load Foundation imports `CovenantCore` instead (see Architecture.md, "Modules"). Dispatch is
// re-exported too (as CovenantCore does): the API is written in its types.
@_exported import CovenantCore
@_exported import CovenantFoundation
@_exported import Dispatch
