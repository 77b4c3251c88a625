import Foundation

/// What a replica holds, as one listing of its prefix and its newest generation show it: see
/// ``ReplicaRestorer/statistics()``.
public struct ReplicaStatistics: Sendable, Hashable {
    /// A number of objects and their bytes, as the listing gives them (envelopes included).
    public struct Tally: Sendable, Hashable {
        /// How many objects.
        public var objects = 0
        /// Their bytes.
        public var bytes: Int64 = 0

        /// Creates a tally of nothing.
        public init() {}

        mutating func add(_ size: Int64) {
            objects += 1
            let (sum, overflow) = bytes.addingReportingOverflow(max(0, size))
            bytes = overflow ? .max : sum
        }
    }

    /// The store the replica is of.
    public var storeID: String
    /// Whether its shipper encrypts (as `replica.json` says).
    public var encrypted: Bool
    /// Every object under the prefix.
    public var total = Tally()
    /// Checkpoint files, whole.
    public var checkpoints = Tally()
    /// Sealed segment files, whole.
    public var segments = Tally()
    /// Pieces of live segments.
    public var pieces = Tally()
    /// Generations.
    public var generations = Tally()
    /// `replica.json`, `lease.json`, and anything else under the prefix.
    public var other = Tally()
    /// The objects the newest readable generation names: what a restore of the latest epoch
    /// fetches. The rest serve older generations (restores to a point in time) or wait for
    /// retention to delete them.
    public var newestNeeds = Tally()
    /// The lowest and highest generation numbers listed.
    public var generationNumbers: ClosedRange<UInt64>?
    /// The newest generation that could be read (`nil` when none could, such as without the key).
    public var newestGeneration: UInt64?
    /// The epochs the newest readable generation reaches.
    public var newestEpochs: ClosedRange<UInt64>?
    /// The term of the shipper that wrote it (`0` before leases).
    public var newestTerm: UInt64?
    /// When it was written.
    public var newestWritten: Date?
    /// When the oldest readable generation was written: how far back a point-in-time restore can go
    /// (`nil` when none of the oldest ``maximumGenerationsTried`` could be read, or no newest one).
    public var oldestWritten: Date?
    /// The term of the replica's lease, as `lease.json` says, when it can be read.
    public var leaseTerm: UInt64?
}

extension ReplicaRestorer {
    /// What the replica holds: its objects by kind and bytes, its generations, the objects its
    /// newest generation needs, and how far back its history reaches. One listing of the prefix,
    /// and a GET of the newest and oldest generations that can be read (at most
    /// ``ReplicaStatistics/maximumGenerationsTried`` from each end).
    ///
    /// - Throws: ``ReplicationError/Code/nothingShipped`` when the prefix holds no replica, the key
    ///   errors (``ReplicationError/Code/wrongKey``, ``ReplicationError/Code/missingKey``,
    ///   ``ReplicationError/Code/unauthenticated``) when the keyring opens none of the newest
    ///   generations, or the client's errors. Damaged generations are passed over, not thrown.
    public func statistics() async throws -> ReplicaStatistics {
        guard let identity = try await replica.identity() else {
            throw ReplicationError(.nothingShipped, "\(location) holds no StateJournal replica.")
        }
        var statistics = ReplicaStatistics(storeID: identity.storeID, encrypted: identity.encrypted ?? false)
        var numbers: [UInt64] = []
        var sizes: [String: Int64] = [:]
        for object in try await replica.list() {
            statistics.total.add(object.size)
            sizes[object.key] = object.size
            if let number = ReplicaLayout.generationNumber(object.key) {
                statistics.generations.add(object.size)
                numbers.append(number)
            } else if object.key.hasPrefix("checkpoints/") {
                statistics.checkpoints.add(object.size)
            } else if object.key.hasPrefix("segments/") {
                statistics.segments.add(object.size)
            } else if object.key.hasPrefix("tail/") {
                statistics.pieces.add(object.size)
            } else {
                statistics.other.add(object.size)
            }
        }
        numbers.sort()
        if let first = numbers.first, let last = numbers.last { statistics.generationNumbers = first...last }
        let bound = replica.bound(to: identity)
        var keyError: ReplicationError?
        func readable(_ candidates: some Sequence<UInt64>) async throws -> ReplicaGeneration? {
            for number in candidates.prefix(ReplicaStatistics.maximumGenerationsTried) {
                do {
                    if let generation = try await bound.generation(number, of: identity.storeID) { return generation }
                } catch let error as ReplicationError where Self.passesOver(error) {
                    if error.code != .damagedObject { keyError = keyError ?? error }
                    continue
                }
            }
            return nil
        }
        if let newest = try await readable(numbers.reversed()) {
            statistics.newestGeneration = newest.generation
            statistics.newestEpochs = newest.epochRange
            statistics.newestTerm = newest.term ?? 0
            statistics.newestWritten = Date(timeIntervalSince1970: Double(newest.writtenMilliseconds) / 1000)
            var named = Set<String>()
            for file in newest.files {
                for object in file.objects where named.insert(object.key).inserted {
                    statistics.newestNeeds.add(sizes[object.key] ?? 0)
                }
            }
        }
        // A key that opens none of the newest generations is the wrong key (or a key for a replica
        // that is not encrypted): said, not reported as an empty replica.
        if statistics.newestGeneration == nil, replica.keyring != nil, let keyError { throw keyError }
        if statistics.newestGeneration != nil, let oldest = try await readable(numbers) {
            statistics.oldestWritten = Date(timeIntervalSince1970: Double(oldest.writtenMilliseconds) / 1000)
        }
        statistics.leaseTerm = (try? await bound.lease())??.document.term
        return statistics
    }
}

extension ReplicaStatistics {
    /// How many generations ``ReplicaRestorer/statistics()`` tries from each end of the chain
    /// before it gives up finding one it can read.
    public static let maximumGenerationsTried = 32
}
