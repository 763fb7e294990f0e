// MigratingFromCoobjc.md's snippets: a promise-based download.
import Covenant
import Foundation

let url = URL(fileURLWithPath: "/tmp/image.png")
func fetchData(_ url: URL) -> Promise<Data> { Promise(Data()) }
let pageURL = URL(string: "http://127.0.0.1:9/index.html")!
