// CovenantNIO re-exports Covenant's Foundation-free core: `import CovenantNIO` (and one
// dependency line in Package.swift) gives a server promises, coroutines, futures, channels and
// scopes without loading Foundation. A server that also wants `RunLoop`/`OperationQueue`
// schedulers or `waitForPromises` adds the `Covenant` product and imports `Covenant`.
@_exported import CovenantCore
