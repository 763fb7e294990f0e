// `import CovenantCore` (and so `import Covenant`, and CovenantNIO's re-export) makes Dispatch
// visible: the API takes and returns its types (`DispatchQueue` schedulers, `DispatchTimeInterval`
// delays and timeouts, `DispatchQueue.promises`), so a file that uses Covenant should not need a
// second import to name them, as it does not for SwiftCoroutine (whose `import Foundation`
// brought Dispatch). Dispatch is what CovenantCore links anyway: no new library is loaded
// (`.ci/footprint.sh`; its CovenantCore program names Dispatch's types through this alone).
@_exported import Dispatch
