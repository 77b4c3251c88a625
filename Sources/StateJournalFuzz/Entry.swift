import Foundation

#if FUZZING

    /// The harness named by `STATEJOURNAL_FUZZ_TARGET`.
    let selectedTarget: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["STATEJOURNAL_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            fatalError("Set STATEJOURNAL_FUZZ_TARGET to one of: \(names)")
        }
        return target
    }()

    /// libFuzzer's entry point.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
        Harness.run(selectedTarget, input)
        return 0
    }

    /// libFuzzer's driver, which parses its flags and runs the inputs through the callback.
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// SwiftPM links an executable's `main` to `<module>_main`; here it hands over to libFuzzer's driver.
    @_cdecl("StateJournalFuzz_main")
    public func fuzzMain(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> CInt {
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
    }

#else

    /// Without libFuzzer: replays the committed seed corpus (and any crash reproducers in it) through
    /// the harnesses, so that every build can run it as a regression test.
    ///
    /// `StateJournalFuzz [--target NAME] [CORPUS-DIRECTORY]` replays; `StateJournalFuzz --make-corpus
    /// DIRECTORY [STORE...]` writes seeds from the stores given and from stores written in memory.
    @main
    struct FuzzCorpusReplay {
        static func main() throws {
            var arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "--make-corpus", arguments.count >= 2 {
                let counts = try Corpus.make(
                    in: URL(fileURLWithPath: arguments[1]),
                    from: arguments.dropFirst(2).map { URL(fileURLWithPath: $0) })
                for target in FuzzTarget.allCases { print("\(target.rawValue): \(counts[target] ?? 0) seeds") }
                return
            }
            var only: FuzzTarget?
            if arguments.first == "--target", arguments.count >= 2 {
                guard let target = FuzzTarget(rawValue: arguments[1]) else {
                    print("unknown target \(arguments[1])")
                    exit(2)
                }
                only = target
                arguments.removeFirst(2)
            }
            let directory = arguments.first.map { URL(fileURLWithPath: $0) } ?? Corpus.defaultDirectory
            var total = 0
            for target in FuzzTarget.allCases where only == nil || only == target {
                let inputs = Corpus.inputs(in: directory.appendingPathComponent(target.rawValue))
                let start = Date()
                for input in inputs { Harness.run(target, Array(try Data(contentsOf: input))) }
                let seconds = Date().timeIntervalSince(start)
                print("\(target.rawValue): \(inputs.count) inputs replayed in \(String(format: "%.2f", seconds)) s")
                total += inputs.count
            }
            guard total > 0 else {
                print("no corpus found in \(directory.path)")
                exit(1)
            }
            print("\(total) inputs replayed, none crashed")
        }
    }

#endif
