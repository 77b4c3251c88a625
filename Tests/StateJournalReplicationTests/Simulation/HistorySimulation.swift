import Foundation

@testable import StateJournalReplication

/// A seeded pseudo-random generator (SplitMix64): every decision of a simulated world comes from
/// one, so that a seed replays the same world.
struct SimulationRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `low...high`.
    mutating func between(_ low: Int64, _ high: Int64) -> Int64 {
        low + Int64(next() % UInt64(high - low + 1))
    }

    /// Whether an event of probability `probability` happens.
    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(UInt64(1) << 53) < probability
    }
}

/// Which rules the simulated readers and writers follow.
enum SimulatedRules: Sendable {
    /// ``ReplicaHistory``: term starts name their basis, generations their predecessor; heads,
    /// members, follower acceptance and term starts all decided by it.
    case current
    /// The rules before it: the head is the newest generation, a generation is used unless
    /// ``ReplicaGeneration/isFencedOut(by:)`` the head (or the follower's applied one), term starts
    /// carry no basis, and a new term builds on the newest generation its shipper reads.
    case legacy
}

/// The simulated stores' counterpart of the shipper's continuity check (`checkContinues`, which
/// compares the head's last epoch and its commit time with the store's): a store continues a head
/// when it holds every epoch the head describes, the same.
enum SimulatedStoreRules {
    /// Whether a store holding `local` (epoch `i + 1` is `local[i]`) continues a head that describes
    /// `described`.
    static func continues<Content: Equatable>(_ local: [Content], _ described: [Content]) -> Bool {
        local.starts(with: described)
    }
}

/// One rule of the simulation broken, with what led to it.
struct SimulationViolation: CustomStringConvertible {
    var seed: UInt64
    var rule: String
    var message: String
    var trace: [String]

    var description: String {
        "seed \(seed), \(rule): \(message)\n  " + trace.joined(separator: "\n  ")
    }
}

/// What simulated worlds did, added up over seeds.
struct SimulationFigures {
    var seeds = 0
    var steps = 0
    var generationsWritten = 0
    var faults: [String: Int] = [:]
    var takeovers = 0
    var forcedTakeovers = 0
    var orphans = 0
    var divergedRefusals = 0
    var storesRefused = 0
    var fencedShippers = 0
    var violations: [SimulationViolation] = []
    var violatingSeeds = 0

    mutating func add(_ other: SimulationFigures) {
        seeds += other.seeds
        steps += other.steps
        generationsWritten += other.generationsWritten
        for (kind, count) in other.faults { faults[kind, default: 0] += count }
        takeovers += other.takeovers
        forcedTakeovers += other.forcedTakeovers
        orphans += other.orphans
        divergedRefusals += other.divergedRefusals
        storesRefused += other.storesRefused
        fencedShippers += other.fencedShippers
        violations += other.violations
        violatingSeeds += other.violatingSeeds
    }

    var summary: String {
        let kinds = faults.keys.sorted().map { "\($0) \(faults[$0]!)" }.joined(separator: ", ")
        return
            "\(seeds) seeds, \(steps) steps, \(generationsWritten) generations written, faults: \(kinds); \(takeovers) takeovers (\(forcedTakeovers) forced), \(fencedShippers) shippers fenced, \(orphans) orphans produced, \(divergedRefusals) follower refusals (diverged), \(storesRefused) stores refused as not continuing the history; \(violatingSeeds) seeds violated the rules"
    }
}

/// A deterministic simulated world of one replica: an object store, a network that delays,
/// reorders, drops and loses, hosts that ship, follow, promote, crash, pause and are partitioned,
/// all on a virtual clock and decided by one seed. After every change of the bucket's generations
/// and every follower's apply it checks that the replica keeps one history and loses no
/// acknowledged epoch outside the documented loss window.
final class HistorySimulation {
    // MARK: The world's parameters (milliseconds)

    static let leaseDuration: Int64 = 10_000
    static let leaseMargin: Int64 = leaseDuration / 5
    static let renewalInterval: Int64 = leaseDuration / 3
    static let requestTimeout: Int64 = 2_000
    static let faultWindow: ClosedRange<Int64> = 2_000...80_000
    static let runLength: Int64 = 110_000
    static let leaseKey = "lease.json"

    // MARK: The object store

    /// What an object holds: a generation (its document is in ``shipped`` under its serial, its
    /// `storeGeneration`, as its bytes would decode) or a lease.
    enum Payload {
        case generation(serial: UInt64)
        case lease(LeaseDocument)
    }

    struct StoredObject {
        var payload: Payload
        var etag: UInt64
    }

    enum Condition {
        case none
        case createOnly
        case ifMatch(UInt64)
    }

    enum Request {
        case get(String)
        case list
        case put(String, Payload, Condition)
        case delete(String)
    }

    enum Response {
        case object(StoredObject?)
        /// The generation numbers listed, newest first, and (for the checks only) the digests of the
        /// generations that were orphans in the bucket when the listing was made.
        case listing([UInt64], orphans: Set<UInt64>)
        case stored(etag: UInt64)
        case preconditionFailed
        case deleted
    }

    /// A generation written by a simulated shipper: its document, its digest, and the epochs
    /// (epoch `i + 1` holds content `epochs[i]`) the store it describes held.
    final class Shipped {
        let document: ReplicaGeneration
        let sha256: String
        let epochs: [EpochContent]
        /// Unique to the document: its `storeGeneration`.
        var serial: UInt64 { document.storeGeneration }

        init(document: ReplicaGeneration, sha256: String, epochs: [EpochContent]) {
            self.document = document
            self.sha256 = sha256
            self.epochs = epochs
        }
    }

    /// What the app committed as one epoch: unique to the host that committed it, like `B:17`.
    struct EpochContent: Hashable, CustomStringConvertible {
        /// The host's letter in the high bits, its commit count in the low ones: a plain number,
        /// so that stores are compared as memory.
        var raw: Int

        init(host: Unicode.Scalar, serial: Int) { raw = Int(host.value) << 32 | serial }

        var description: String { "\(Unicode.Scalar(UInt32(raw >> 32))!):\(raw & 0xFFFF_FFFF)" }
    }

    /// Whether `left` and `right` hold the same first `count` epochs.
    static func agree(_ left: [EpochContent], _ right: [EpochContent], count: Int) -> Bool {
        guard left.count >= count, right.count >= count else { return false }
        guard count > 0 else { return true }
        return left.withUnsafeBytes { left in
            right.withUnsafeBytes { right in
                memcmp(left.baseAddress!, right.baseAddress!, count * MemoryLayout<EpochContent>.stride) == 0
            }
        }
    }

    /// The first epoch index where `left` and `right` differ within their first `count`.
    static func firstDisagreement(_ left: [EpochContent], _ right: [EpochContent], count: Int) -> Int {
        (0..<count).first { $0 >= left.count || $0 >= right.count || left[$0] != right[$0] } ?? count
    }

    /// Where a term began, as the world knows it: the generation whose epochs the new holder's
    /// store held when it began (nil for an empty replica), whatever its generations claim.
    struct TermBegan {
        var number: UInt64?
        var epochs: [EpochContent]
    }

    // MARK: Hosts

    /// A simulated host: the replica's primary, a standby, or a plain follower.
    final class Host {
        enum Role { case shipper, standby, follower }
        enum Phase {
            case following
            case acquiring
            case startingTerm
            case promoting
            case shipping
            case stopped(String)
        }

        let name: String
        let index: Int
        /// How fast its clock runs, in parts per million off the world's.
        let drift: Int64
        var role: Role
        var phase: Phase
        var incarnation = 0
        var down = false
        var pausedUntil: Int64 = 0
        var busy = false
        var pending: (id: Int, handler: (Response?) -> Void)?
        // Kept across crashes: the local store, and a follower's applied generation.
        var epochs: [EpochContent] = []
        var commits = 0
        var applied: Shipped?
        var diverged = false
        // Lost in a crash.
        var term: UInt64?
        var lease: LeaseDocument?
        var leaseETag: UInt64 = 0
        var lastRenewal: Int64 = 0
        var base: Shipped?
        var highestSeen: UInt64 = 0
        var startedTerm = false
        var sent: Set<UInt64> = []
        var observed: (etag: UInt64, since: Int64)?
        var forceTakeover = false
        var holdNextWriteUntil: Int64?
        var promotingPolls = 0

        init(name: String, index: Int, role: Role, drift: Int64) {
            self.name = name
            self.index = index
            self.role = role
            self.drift = drift
            phase = role == .shipper ? .acquiring : .following
        }

        var isShipping: Bool {
            if case .shipping = phase { return true }
            return false
        }

        func forget() {
            term = nil
            lease = nil
            leaseETag = 0
            lastRenewal = 0
            base = nil
            highestSeen = 0
            startedTerm = false
            sent = []
            observed = nil
            forceTakeover = false
            holdNextWriteUntil = nil
            promotingPolls = 0
            pending = nil
            busy = false
        }
    }

    // MARK: State

    let seed: UInt64
    let rules: SimulatedRules
    var random: SimulationRandom
    var now: Int64 = 0
    var hosts: [Host] = []
    var objects: [String: StoredObject] = [:]
    var nextETag: UInt64 = 1
    var shipped: [UInt64: Shipped] = [:]
    /// The generations in the bucket, newest number first.
    var bucket: [Shipped] = []
    var orphans: Set<UInt64> = []
    var everOrphaned: Set<UInt64> = []
    var termBegan: [UInt64: TermBegan] = [:]
    /// The term each epoch content was committed in.
    var commitTerm: [EpochContent: UInt64] = [:]
    /// What the history held at the last check (its members agree, so its longest member's
    /// epochs): every epoch content once shipped in a member and not lost since.
    var heldInHistory: [EpochContent] = []
    var partitions: [Int: (from: Int64, until: Int64, dropping: Bool)] = [:]
    var serial: UInt64 = 0
    var nextRequest = 0
    var queue = EventQueue()
    var trace: [String] = []
    var figures = SimulationFigures()
    var violation: SimulationViolation?
    let storeID = String(repeating: "5", count: 32)

    init(seed: UInt64, rules: SimulatedRules) {
        self.seed = seed
        self.rules = rules
        random = SimulationRandom(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1)
    }

    // MARK: Running

    /// Runs the world to its end, or to the first violation.
    func run() -> SimulationFigures {
        let standbys = random.chance(0.5) ? 2 : 1
        var names: [(String, Host.Role)] = [("A", .shipper), ("B", .standby)]
        if standbys == 2 { names.append(("C", .standby)) }
        names.append(("F", .follower))
        for (index, (name, role)) in names.enumerated() {
            let host = Host(name: name, index: index, role: role, drift: random.between(-20_000, 20_000))
            hosts.append(host)
            startLoops(host)
        }
        let faultCount = Int(random.between(1, 6))
        for _ in 0..<faultCount {
            let at = random.between(Self.faultWindow.lowerBound, Self.faultWindow.upperBound)
            let kind = FaultKind.allCases[Int(random.next() % UInt64(FaultKind.allCases.count))]
            push(at: at, host: nil) { [unowned self] in inject(kind) }
        }
        while violation == nil, let event = queue.pop() {
            guard event.time <= Self.runLength else { break }
            if let index = event.host, hosts[index].pausedUntil > event.time {
                push(at: hosts[index].pausedUntil, host: index, event.action)
                continue
            }
            now = event.time
            figures.steps += 1
            event.action()
        }
        figures.seeds = 1
        figures.orphans = everOrphaned.count
        if let violation {
            figures.violations = [violation]
            figures.violatingSeeds = 1
        }
        // Breaks the cycles the pending handlers and queued events hold.
        queue = EventQueue()
        for host in hosts { host.pending = nil }
        return figures
    }

    func note(_ line: @autoclosure () -> String) {
        trace.append("\(now) ms: \(line())")
        if trace.count > 60 { trace.removeFirst(trace.count - 60) }
    }

    func violate(_ rule: String, _ message: String) {
        guard violation == nil else { return }
        violation = SimulationViolation(seed: seed, rule: rule, message: message, trace: trace)
    }

    // MARK: Clocks and events

    /// The time on `host`'s own clock.
    func local(_ host: Host) -> Int64 { now + now * host.drift / 1_000_000 }

    /// The world's duration of `duration` on `host`'s clock.
    func worldDuration(_ duration: Int64, on host: Host) -> Int64 {
        max(1, duration * 1_000_000 / (1_000_000 + host.drift))
    }

    func push(at time: Int64, host: Int?, _ action: @escaping () -> Void) {
        queue.push(time: time, host: host, action: action)
    }

    func startLoops(_ host: Host) {
        let incarnation = host.incarnation
        scheduleTick(host, incarnation: incarnation, after: random.between(1, 500))
        scheduleCommit(host, incarnation: incarnation)
    }

    func scheduleTick(_ host: Host, incarnation: Int, after delay: Int64) {
        push(at: now + worldDuration(delay, on: host), host: host.index) { [unowned self] in
            guard host.incarnation == incarnation, !host.down else { return }
            scheduleTick(host, incarnation: incarnation, after: random.between(400, 800))
            tick(host)
        }
    }

    /// The app commits epochs at random times on a host that ships as the primary.
    func scheduleCommit(_ host: Host, incarnation: Int) {
        push(at: now + worldDuration(random.between(200, 2_500), on: host), host: host.index) { [unowned self] in
            guard host.incarnation == incarnation, !host.down else { return }
            scheduleCommit(host, incarnation: incarnation)
            guard host.role == .shipper, host.isShipping, let term = host.term else { return }
            host.commits += 1
            let content = EpochContent(host: host.name.unicodeScalars.first!, serial: host.commits)
            host.epochs.append(content)
            commitTerm[content] = term
        }
    }

    // MARK: The network

    /// How long a message `host` sends or receives at `time` takes, or nil when it is dropped.
    func transit(_ host: Host, at time: Int64) -> Int64? {
        if let partition = partitions[host.index], (partition.from..<partition.until).contains(time) {
            return partition.dropping ? nil : partition.until - time + random.between(1, 40)
        }
        if random.chance(0.01) { return nil }
        if random.chance(0.03) { return random.between(1_000, 6_000) }
        return random.between(1, 40)
    }

    /// Sends `request` from `host` (at `sendAt`, or now), and calls `handler` with the response, or
    /// with nil when none came within the host's timeout.
    func send(_ host: Host, _ request: Request, at sendAt: Int64? = nil, _ handler: @escaping (Response?) -> Void) {
        let id = nextRequest
        nextRequest += 1
        let start = sendAt ?? now
        let incarnation = host.incarnation
        host.pending = (id, handler)
        if let delay = transit(host, at: start) {
            push(at: start + delay, host: nil) { [unowned self] in
                let response = apply(request)
                guard !random.chance(0.01), let back = transit(host, at: now) else { return }
                push(at: now + back, host: host.index) { [unowned self] in
                    complete(host, incarnation: incarnation, id: id, response)
                }
            }
        }
        push(at: start + worldDuration(Self.requestTimeout, on: host), host: host.index) { [unowned self] in
            complete(host, incarnation: incarnation, id: id, nil)
        }
    }

    func complete(_ host: Host, incarnation: Int, id: Int, _ response: Response?) {
        guard host.incarnation == incarnation, !host.down, let pending = host.pending, pending.id == id else { return }
        host.pending = nil
        pending.handler(response)
    }

    // MARK: The object store

    func apply(_ request: Request) -> Response {
        switch request {
        case .get(let key):
            return .object(objects[key])
        case .list:
            return .listing(bucket.map { $0.document.generation }, orphans: orphans)
        case .delete(let key):
            objects[key] = nil
            return .deleted
        case .put(let key, let payload, let condition):
            switch condition {
            case .none: break
            case .createOnly: if objects[key] != nil { return .preconditionFailed }
            case .ifMatch(let etag): if objects[key]?.etag != etag { return .preconditionFailed }
            }
            let etag = nextETag
            nextETag += 1
            objects[key] = StoredObject(payload: payload, etag: etag)
            if case .generation(let serial) = payload, let generation = shipped[serial] {
                landed(generation, key: key)
            }
            return .stored(etag: etag)
        }
    }

    func landed(_ generation: Shipped, key: String) {
        precondition(ReplicaLayout.generationNumber(key) == generation.document.generation)
        let index = bucket.firstIndex { $0.document.generation < generation.document.generation } ?? bucket.count
        bucket.insert(generation, at: index)
        note(
            "generation \(generation.document.generation) landed: term \(generation.document.term ?? 0) by \(generation.document.holder ?? "-"), epochs through \(generation.epochs.count) (last \(generation.epochs.last.map(String.init(describing:)) ?? "none")), predecessor \(generation.document.predecessor.map { String($0.generation) } ?? "none"), terms \((generation.document.terms ?? []).map { "\($0.term)@\($0.generation)/\($0.basis.map(String.init) ?? "-")" })"
        )
        checkHistory()
    }

    // MARK: Reading the replica

    /// The history a restore reads from the bucket: its head and its members.
    func history() -> (head: Shipped, members: [Shipped])? {
        guard !bucket.isEmpty else { return nil }
        switch rules {
        case .current:
            let head = bucket[ReplicaHistory.headIndex(bucket.map { $0.document })!]
            return (head, bucket.filter { ReplicaHistory.placement(of: $0.document, under: head.document).isMember })
        case .legacy:
            let head = bucket[0]
            return (head, bucket.filter { !$0.document.isFencedOut(by: head.document) })
        }
    }

    /// The generations numbered `numbers`, read one after the other; nil when a read failed.
    func read(_ host: Host, _ numbers: [UInt64], _ done: @escaping ([Shipped]?) -> Void) {
        var read: [Shipped] = []
        func next(_ index: Int) {
            guard index < numbers.count else { return done(read) }
            send(host, .get(ReplicaLayout.generation(numbers[index]))) { [unowned self] response in
                guard case .object(let object?)? = response, case .generation(let serial) = object.payload,
                    let generation = shipped[serial]
                else { return done(nil) }
                read.append(generation)
                next(index + 1)
            }
        }
        next(0)
    }

    /// Lists the generations and reads the newest ones a reader needs for the head (two under the
    /// current rules, for ``ReplicaHistory/headIndex(_:)``; one under the previous ones): the head,
    /// the generations read, and the orphans of the bucket when it was listed.
    func readHead(
        _ host: Host, _ done: @escaping ((head: Shipped?, read: [Shipped], orphans: Set<UInt64>)?) -> Void
    ) {
        send(host, .list) { [unowned self] response in
            guard case .listing(let numbers, let orphansThen)? = response else { return done(nil) }
            let newest = numbers
            host.highestSeen = max(host.highestSeen, newest.first ?? 0)
            read(host, Array(newest.prefix(rules == .current ? 2 : 1))) { [unowned self] read in
                guard let read else { return done(nil) }
                guard !read.isEmpty else { return done((nil, [], orphansThen)) }
                switch rules {
                case .current: done((read[ReplicaHistory.headIndex(read.map { $0.document })!], read, orphansThen))
                case .legacy: done((read[0], read, orphansThen))
                }
            }
        }
    }

    // MARK: Following

    /// One poll of a follower (or a standby): reads the head and applies it when it continues
    /// what was applied. Calls `done` with whether it applied one, nil when a request failed.
    func poll(_ host: Host, _ done: @escaping (Bool?) -> Void) {
        guard !host.diverged else { return done(false) }
        readHead(host) { [unowned self] found in
            guard let found else { return done(nil) }
            guard let head = found.head else { return done(false) }
            guard let applied = host.applied else {
                accept(host, head, orphansWhenRead: found.orphans)
                return done(true)
            }
            guard head.document.generation > applied.document.generation else { return done(false) }
            switch rules {
            case .current:
                switch ReplicaHistory.continuation(from: applied.document, sha256: applied.sha256, to: head.document) {
                case .extends:
                    accept(host, head, orphansWhenRead: found.orphans)
                    return done(true)
                case .diverged(let why):
                    host.diverged = true
                    figures.divergedRefusals += 1
                    note("\(host.name) refuses generation \(head.document.generation), diverged: \(why)")
                    return done(false)
                }
            case .legacy:
                guard !head.document.isFencedOut(by: applied.document) else { return done(false) }
                accept(host, head, orphansWhenRead: found.orphans)
                return done(true)
            }
        }
    }

    /// Applies `generation` on a follower: its store becomes the epochs it describes. Check 3.
    func accept(_ host: Host, _ generation: Shipped, orphansWhenRead: Set<UInt64>) {
        note(
            "\(host.name) applies generation \(generation.document.generation) (epochs through \(generation.epochs.count))"
        )
        if orphansWhenRead.contains(generation.serial) {
            violate(
                "3. followers never apply an orphan",
                "\(host.name) applied generation \(generation.document.generation), an orphan in the bucket when it listed it"
            )
        }
        if !Self.agree(host.epochs, generation.epochs, count: host.epochs.count) {
            let index = Self.firstDisagreement(host.epochs, generation.epochs, count: host.epochs.count)
            let content = host.epochs[index]
            violate(
                "3. followers never go back silently",
                "\(host.name) held epoch \(index + 1) as \(content); applying generation \(generation.document.generation) makes it \(index < generation.epochs.count ? "\(generation.epochs[index])" : "absent") without a refusal"
            )
        }
        host.applied = generation
        host.epochs = generation.epochs
    }

    // MARK: The lease

    /// Takes the lease when it is free, released, unchanged for its duration on the host's clock
    /// (the holder stops a margin before), an earlier run's of this host, or at once when `forced`.
    func acquire(_ host: Host, forced: Bool, _ done: @escaping (Bool) -> Void) {
        send(host, .get(Self.leaseKey)) { [unowned self] response in
            guard case .object(let object)? = response else { return done(false) }
            guard let object, case .lease(let found) = object.payload else {
                return claim(host, term: 1, condition: .createOnly, forced: forced, done)
            }
            let clock = local(host)
            if host.observed?.etag != object.etag { host.observed = (object.etag, clock) }
            let expired = found.released || clock - host.observed!.since >= Self.leaseDuration
            let earlierRun = found.holder == host.name && host.term == nil
            guard forced || expired || earlierRun else { return done(false) }
            claim(host, term: found.term + 1, condition: .ifMatch(object.etag), forced: forced && !expired, done)
        }
    }

    func claim(
        _ host: Host, term: UInt64, condition: Condition, forced: Bool, _ done: @escaping (Bool) -> Void
    ) {
        let document = LeaseDocument(
            term: term, holder: host.name, renewal: 0, durationMilliseconds: UInt64(Self.leaseDuration),
            released: false, latestGeneration: nil, host: host.name, writtenMilliseconds: UInt64(local(host)))
        let sentAt = local(host)
        send(host, .put(Self.leaseKey, .lease(document), condition)) { [unowned self] response in
            guard case .stored(let etag)? = response else { return done(false) }
            host.term = term
            host.lease = document
            host.leaseETag = etag
            host.lastRenewal = sentAt
            host.forceTakeover = false
            host.startedTerm = false
            host.sent = []
            if term > 1 {
                figures.takeovers += 1
                if forced { figures.forcedTakeovers += 1 }
            }
            note("\(host.name) takes the lease in term \(term)\(forced ? " by force" : "")")
            done(true)
        }
    }

    /// Renews the lease; a lease of another term or holder fences the shipper.
    func renew(_ host: Host, _ done: @escaping () -> Void) {
        guard var document = host.lease else { return done() }
        document.renewal += 1
        document.writtenMilliseconds = UInt64(local(host))
        let sentAt = local(host)
        send(host, .put(Self.leaseKey, .lease(document), .ifMatch(host.leaseETag))) { [unowned self] response in
            switch response {
            case .stored(let etag)?:
                host.lease = document
                host.leaseETag = etag
                host.lastRenewal = sentAt
                done()
            case .preconditionFailed?:
                send(host, .get(Self.leaseKey)) { [unowned self] response in
                    if case .object(let object?)? = response, case .lease(let found) = object.payload {
                        if found.term != host.term || found.holder != host.name {
                            fence(host, "the lease is in term \(found.term), held by \(found.holder)")
                        } else {
                            // A renewal of its own landed after it stopped waiting for it.
                            host.lease = found
                            host.leaseETag = object.etag
                        }
                    }
                    done()
                }
            default:
                done()
            }
        }
    }

    func release(_ host: Host, _ done: @escaping () -> Void) {
        guard var document = host.lease else { return done() }
        document.released = true
        send(host, .put(Self.leaseKey, .lease(document), .ifMatch(host.leaseETag))) { _ in done() }
    }

    func fence(_ host: Host, _ why: String) {
        if case .stopped = host.phase { return }
        figures.fencedShippers += 1
        host.phase = .stopped("fenced: \(why)")
        note("\(host.name) (term \(host.term ?? 0)) is fenced: \(why)")
    }

    func leaseIsValid(_ host: Host) -> Bool {
        host.term != nil && local(host) < host.lastRenewal + Self.leaseDuration - Self.leaseMargin
    }

    // MARK: Each host's step

    func tick(_ host: Host) {
        guard !host.busy else { return }
        host.busy = true
        let finish = { host.busy = false }
        switch host.phase {
        case .stopped:
            host.busy = false
        case .following:
            poll(host) { [unowned self] _ in
                guard host.role == .standby, !host.diverged else { return finish() }
                acquire(host, forced: host.forceTakeover) { [unowned self] held in
                    if held {
                        host.phase = .promoting
                        host.promotingPolls = 0
                    }
                    finish()
                }
            }
        case .promoting:
            poll(host) { [unowned self] applied in
                if host.diverged {
                    host.phase = .stopped("diverged while promoting")
                    return finish()
                }
                host.promotingPolls += 1
                // Every generation it can apply is applied first; a failed read is tried again.
                if applied != false && host.promotingPolls < 20 { return finish() }
                beginPromotedTerm(host, finish)
            }
        case .acquiring:
            acquire(host, forced: host.forceTakeover) { [unowned self] held in
                if held { host.phase = .startingTerm }
                finish()
            }
        case .startingTerm:
            beginTerm(host, finish)
        case .shipping:
            ship(host, finish)
        }
    }

    /// A promoted standby's term starts from the last generation it applied, its store's
    /// (under the previous rules, it builds on the newest generation it reads).
    func beginPromotedTerm(_ host: Host, _ done: @escaping () -> Void) {
        host.role = .shipper
        termBegan[host.term!] = TermBegan(number: host.applied?.document.generation, epochs: host.applied?.epochs ?? [])
        host.epochs = host.applied?.epochs ?? []
        switch rules {
        case .current:
            host.base = host.applied
            host.phase = .shipping
            note("\(host.name) begins term \(host.term!) from generation \(host.base?.document.generation ?? 0)")
            done()
        case .legacy:
            readHead(host) { [unowned self] found in
                guard let found else { return done() }
                host.base = found.head
                host.phase = .shipping
                note(
                    "\(host.name) begins term \(host.term!) from generation \(host.applied?.document.generation ?? 0), building on \(host.base?.document.generation ?? 0)"
                )
                done()
            }
        }
    }

    /// A shipper that is not a promoted standby begins its term from the head it reads, when its
    /// store continues it; otherwise it gives the lease up and ships nothing.
    func beginTerm(_ host: Host, _ done: @escaping () -> Void) {
        readHead(host) { [unowned self] found in
            guard let found, let term = host.term else { return done() }
            if ReplicaHistory.isFenced(term: term, reading: found.read.map(\.document)) {
                fence(host, "a generation of a newer term is in the bucket")
                return done()
            }
            if let head = found.head, !SimulatedStoreRules.continues(host.epochs, head.epochs) {
                figures.storesRefused += 1
                host.phase = .stopped("its store does not continue the history")
                note("\(host.name) refuses to ship: its store does not continue generation \(head.document.generation)")
                return release(host, done)
            }
            host.base = found.head
            termBegan[term] = TermBegan(number: found.head?.document.generation, epochs: found.head?.epochs ?? [])
            host.phase = .shipping
            note("\(host.name) begins term \(term) from generation \(found.head?.document.generation ?? 0)")
            done()
        }
    }

    /// One pass of a shipper: renews the lease when due (or run out), or writes a generation of
    /// its store when it has something to ship and its lease is valid on its own clock.
    func ship(_ host: Host, _ done: @escaping () -> Void) {
        if local(host) - host.lastRenewal >= Self.renewalInterval || !leaseIsValid(host) {
            return renew(host, done)
        }
        let shippedEpochs = host.base?.epochs.count ?? 0
        guard !host.startedTerm || host.epochs.count > shippedEpochs else { return done() }
        write(host, done)
    }

    func write(_ host: Host, _ done: @escaping () -> Void) {
        guard let term = host.term, leaseIsValid(host) else { return done() }
        let base = host.base
        let number = ReplicaHistory.nextNumber(highestSeen: host.highestSeen, building: base?.document)
        serial += 1
        var document = ReplicaGeneration(
            storeID: storeID, generation: number, writtenMilliseconds: UInt64(max(0, local(host))),
            storeGeneration: serial, nextFileSequence: 1, epochFloor: 0,
            lastEpoch: host.epochs.isEmpty ? nil : UInt64(host.epochs.count), lastEpochMilliseconds: nil, files: [])
        document.term = term
        document.holder = host.name
        switch rules {
        case .current:
            document.version = ReplicaGeneration.currentVersion
            document.terms = ReplicaHistory.termStarts(term: term, number: number, building: base?.document)
            document.predecessor = base.map {
                ReplicaGeneration.Link(
                    generation: $0.document.generation, term: $0.document.term ?? 0, sha256: $0.sha256)
            }
        case .legacy:
            document.version = 3
            var starts = base?.document.terms ?? []
            if starts.last?.term != term { starts.append(ReplicaGeneration.TermStart(term: term, generation: number)) }
            document.terms = starts
        }
        let sha256 = ReplicaLayout.sha256Hex(try! ReplicaGeneration.encode(document))
        let generation = Shipped(document: document, sha256: sha256, epochs: host.epochs)
        shipped[generation.serial] = generation
        host.sent.insert(generation.serial)
        figures.generationsWritten += 1
        var sendAt: Int64?
        if let hold = host.holdNextWriteUntil {
            // Stopped between its lease check and its request.
            host.holdNextWriteUntil = nil
            host.pausedUntil = hold
            sendAt = hold
        }
        send(
            host, .put(ReplicaLayout.generation(number), .generation(serial: generation.serial), .createOnly),
            at: sendAt
        ) {
            [unowned self] response in
            if case .stored? = response {
                wrote(host, generation)
                return done()
            }
            // Refused (the number is taken) or no answer: read again what is there.
            reread(host, number, done)
        }
    }

    func wrote(_ host: Host, _ generation: Shipped) {
        host.base = generation
        host.highestSeen = max(host.highestSeen, generation.document.generation)
        host.startedTerm = true
    }

    /// After a generation was refused or not answered: one of its own landed there (adopted),
    /// one of a newer term did (fenced), or another of an older term (the next number is taken).
    func reread(_ host: Host, _ number: UInt64, _ done: @escaping () -> Void) {
        send(host, .list) { [unowned self] response in
            guard case .listing(let numbers, _)? = response, let term = host.term else { return done() }
            let newest = numbers.max() ?? 0
            host.highestSeen = max(host.highestSeen, newest)
            let wanted = newest > number ? [number, newest] : [number]
            read(host, wanted.filter { numbers.contains($0) }) { [unowned self] read in
                guard let read else { return done() }
                if let own = read.first(where: { $0.document.generation == number && host.sent.contains($0.serial) }) {
                    wrote(host, own)
                }
                if ReplicaHistory.isFenced(term: term, reading: read.map(\.document)) {
                    fence(host, "a generation of a newer term is in the bucket")
                }
                done()
            }
        }
    }

    // MARK: Faults

    enum FaultKind: String, CaseIterable {
        case crash
        case pause
        case pauseBetweenLeaseCheckAndWrite
        case partitionHealingLate
        case partitionDropping
        case forcedTakeover
        case racingForcedTakeovers
    }

    func inject(_ kind: FaultKind) {
        let shippers = hosts.filter { $0.role == .shipper && $0.isShipping && !$0.down }
        let standbys = hosts.filter { $0.role == .standby && !$0.down && !$0.diverged }
        func target() -> Host {
            if !shippers.isEmpty && random.chance(0.7) { return shippers[Int(random.next() % UInt64(shippers.count))] }
            return hosts[Int(random.next() % UInt64(hosts.count))]
        }
        figures.faults[kind.rawValue, default: 0] += 1
        switch kind {
        case .crash:
            let host = target()
            guard !host.down else { return }
            let restart = now + random.between(500, 25_000)
            note("\(host.name) crashes, restarts at \(restart) ms")
            host.incarnation += 1
            host.down = true
            host.forget()
            push(at: restart, host: nil) { [unowned self] in
                host.down = false
                host.pausedUntil = 0
                host.phase = host.role == .shipper ? .acquiring : .following
                note("\(host.name) restarts as \(host.role)")
                startLoops(host)
            }
        case .pause:
            let host = target()
            host.pausedUntil = max(
                host.pausedUntil, now + random.between(Self.leaseDuration + 1, 3 * Self.leaseDuration))
            note("\(host.name) is paused until \(host.pausedUntil) ms")
        case .pauseBetweenLeaseCheckAndWrite:
            let host = target()
            host.holdNextWriteUntil = now + random.between(Self.leaseDuration + 1, 3 * Self.leaseDuration)
            note(
                "\(host.name) will pause between its lease check and its next generation until \(host.holdNextWriteUntil!) ms"
            )
        case .partitionHealingLate, .partitionDropping:
            let host = target()
            let until = now + random.between(3_000, 25_000)
            partitions[host.index] = (now, until, kind == .partitionDropping)
            note(
                "\(host.name) is partitioned until \(until) ms (\(kind == .partitionDropping ? "dropping" : "delivering late"))"
            )
        case .forcedTakeover:
            guard let host = standbys.first(where: { _ in random.chance(0.5) }) ?? standbys.first else { return }
            host.forceTakeover = true
            note("\(host.name) is told to take over by force")
        case .racingForcedTakeovers:
            for host in standbys {
                host.forceTakeover = true
                note("\(host.name) is told to take over by force (racing)")
            }
        }
    }

    // MARK: Checks

    /// Checks 1, 2, 4 and 5 over the bucket as a restore reads it.
    func checkHistory() {
        guard let (head, members) = history() else { return }
        let memberSerials = Set(members.map { $0.serial })
        orphans = []
        for generation in bucket where !memberSerials.contains(generation.serial) {
            orphans.insert(generation.serial)
            everOrphaned.insert(generation.serial)
        }
        // 1. One history: every member that describes an epoch agrees on its content.
        var longest = members[0]
        for member in members where member.epochs.count > longest.epochs.count { longest = member }
        for member in members where !Self.agree(member.epochs, longest.epochs, count: member.epochs.count) {
            let index = Self.firstDisagreement(member.epochs, longest.epochs, count: member.epochs.count)
            return violate(
                "1. one history",
                "epoch \(index + 1) is \(longest.epochs[index]) in generation \(longest.document.generation) and \(member.epochs[index]) in generation \(member.document.generation), both in the history ending at \(head.document.generation)"
            )
        }
        // 2. No member of an older term numbered after the generation a newer term began from.
        let memberTerms = Array(Set(members.map { $0.document.term ?? 0 })).sorted()
        let beginnings = memberTerms.map { (term: $0, number: termBegan[$0]?.number ?? 0) }
        for member in members {
            let term = member.document.term ?? 0
            for (newer, began) in beginnings where newer > term {
                if member.document.generation > began {
                    return violate(
                        "2. no member after a newer term's beginning",
                        "generation \(member.document.generation) of term \(term) is in the history, numbered after generation \(began), from which term \(newer) began"
                    )
                }
            }
        }
        // 5. At most one holder per term.
        var holders: [UInt64: String] = [:]
        for member in members {
            let term = member.document.term ?? 0
            if let other = holders[term], other != member.document.holder {
                return violate(
                    "5. one holder per term",
                    "term \(term) has generations of \(other) and of \(member.document.holder ?? "-") in the history")
            }
            holders[term] = member.document.holder
        }
        // 4. Acknowledged epochs shipped in a member stay, but for the documented loss window.
        var index = Self.agree(heldInHistory, head.epochs, count: heldInHistory.count) ? heldInHistory.count : 0
        while index < heldInHistory.count {
            let content = heldInHistory[index]
            if index >= head.epochs.count || head.epochs[index] != content {
                let committed = commitTerm[content] ?? 0
                let explained = memberTerms.contains { newer in
                    guard newer > committed, let began = termBegan[newer] else { return false }
                    return index >= began.epochs.count || began.epochs[index] != content
                }
                if !explained {
                    return violate(
                        "4. acknowledged epochs stay",
                        "epoch \(index + 1) as \(content), committed in term \(committed) and shipped in a generation of the history, is not in the history ending at \(head.document.generation), and no newer term began before it"
                    )
                }
            }
            index += 1
        }
        // The members agree (1), so what they hold is what the longest holds.
        heldInHistory = longest.epochs
    }
}

/// The world's pending events, earliest first, in the order they were scheduled at equal times.
struct EventQueue {
    struct Event {
        var time: Int64
        /// The host the event happens on (deferred while it is paused), nil for the store's.
        var host: Int?
        var action: () -> Void
    }

    /// A heap entry: plain numbers, cheap to move; the event itself waits in `slots`.
    private struct Entry {
        var time: Int64
        var order: UInt64
        var slot: Int
    }

    private var heap: [Entry] = []
    private var slots: [Event?] = []
    private var free: [Int] = []
    private var order: UInt64 = 0

    private static func earlier(_ left: Entry, _ right: Entry) -> Bool {
        left.time < right.time || (left.time == right.time && left.order < right.order)
    }

    mutating func push(time: Int64, host: Int?, action: @escaping () -> Void) {
        order += 1
        let event = Event(time: time, host: host, action: action)
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = event
        } else {
            slot = slots.count
            slots.append(event)
        }
        heap.append(Entry(time: time, order: order, slot: slot))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.earlier(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Event? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Self.earlier(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.earlier(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        let event = slots[first.slot]
        slots[first.slot] = nil
        free.append(first.slot)
        return event
    }
}
