// swift-corelibs-xctest cannot discover Quick specs: Quick's documented way on Linux is an
// executable that calls QCKMain with the spec classes.
import Quick

QCKMain([PromiseSpec.self, ChannelSpec.self, SequenceSpec.self])
