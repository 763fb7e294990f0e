// FuturesChannelsAndSelect.md's snippets: a future-based API and a few channels.
import Covenant
import Foundation

let id = 1
let url = URL(fileURLWithPath: "/tmp/image.png")

func loadImage(_ url: URL) -> CoFuture<Data> { CoFuture(result: .success(Data())) }
func makeThumbnail(of data: Data) throws -> Image { Image(data: data) }
func fetchUser(_ id: Int) -> CoFuture<User> { CoFuture(result: .success(User(id: id))) }
func fetchImage(_ url: URL) -> CoFuture<Data> { CoFuture(result: .success(Data())) }

struct API: Sendable {
  func download(_ url: URL) -> Promise<Data> { Promise(Data()) }
}
let api = API()

enum Event: Sendable { case tap }
let numbers = CoChannel<Int>()
let names = CoChannel<String>()
let acks = CoChannel<Bool>()
let events = CoChannel<Event>()
let ticks = CoChannel<Int>()
func handle(_ event: Event) {}
func refresh() {}
let results = CoChannel<Int>()
let stop = CoChannel<Void>()
let lines = CoChannel<String>()
let wantsTicks = true
func handle(_ value: Int) {}
func report(_ count: Int) {}
func crunch() throws -> Int { 0 }
