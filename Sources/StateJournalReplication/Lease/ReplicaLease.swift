import Foundation
import Logging
import StateJournal

/// What `lease.json` holds: which shipper may write generations, in which term, and how recently
/// it said it is alive.
///
/// The lease decides only *when* a shipper takes over from another; that two shippers never both
/// have generations accepted rests on create-only generation numbers and the terms they carry (see
/// ``ReplicaGeneration/isFencedOut(by:)``). Nothing in it is compared with a local clock: the
/// times are for people reading the bucket. A shipper judges a holder dead when the document
/// (its ETag and ``renewal``) has not changed for ``durationMilliseconds``, measured
/// on its own clock from the moment it first saw it.
struct LeaseDocument: Codable, Equatable, Sendable {
    var format = "statejournal-replica-lease"
    var version = 1
    /// The term of the holder: one more than every term before it.
    var term: UInt64
    /// The holder's id: 32 lowercase hex digits drawn when its shipper started.
    var holder: String
    /// How many times the holder renewed the lease in this term: every renewal changes the
    /// document, so that an unchanged document means a silent holder.
    var renewal: UInt64
    /// How long the holder may stay silent before another shipper takes over.
    var durationMilliseconds: UInt64
    /// Whether the holder gave the lease up (it stopped shipping): another shipper may take over at once.
    var released: Bool
    /// The newest generation the holder wrote, when it wrote one in this term.
    var latestGeneration: UInt64?
    /// Whether the holder is idle and no standby watched the replica when it went idle: the lease
    /// does not expire, and nobody takes it over unless it is released or taken by force. Absent
    /// while the holder ships.
    var dormant: Bool?
    /// The holder's host name, for people.
    var host: String?
    /// When the holder wrote this, in milliseconds since 1970 UTC, for people.
    var writtenMilliseconds: UInt64

    static let name = "lease.json"
    /// The shortest and longest lease durations a shipper accepts from the bucket.
    static let durationRange: ClosedRange<UInt64> = 100...3_600_000

    static func encode(_ document: LeaseDocument) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(document))
    }

    /// The document in `bytes`, checked: a lease that fails is damage, not a lease.
    static func decode(_ bytes: [UInt8], key: String) throws -> LeaseDocument {
        func damaged(_ reason: String) -> ReplicationError {
            ReplicationError(.damagedObject, "The lease \(printable(key)) is not a valid lease: \(reason).", key: key)
        }
        guard let document = try? JSONDecoder().decode(LeaseDocument.self, from: Data(bytes)) else {
            throw damaged("it is not a lease document")
        }
        guard document.format == "statejournal-replica-lease", document.version == 1 else {
            throw damaged("its format is \(printable(document.format)) version \(document.version)")
        }
        guard ReplicaIdentity.isStoreID(document.holder) else { throw damaged("its holder is not a holder id") }
        guard document.term >= 1, document.term <= ReplicaLimits.maximumCounter,
            document.renewal <= ReplicaLimits.maximumCounter,
            (document.latestGeneration ?? 0) <= ReplicaLimits.maximumCounter
        else { throw damaged("a number in it is out of range") }
        guard durationRange.contains(document.durationMilliseconds) else {
            throw damaged("its duration, \(document.durationMilliseconds) ms, is out of range")
        }
        return document
    }
}

extension Replica {
    /// The lease and its ETag; `nil` when the replica has none.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when it is not a valid lease, the
    ///   envelope's key errors, or the client's.
    func lease() async throws -> (document: LeaseDocument, etag: String)? {
        guard let found = try await getWithETag(LeaseDocument.name, maximumPayload: ReplicaLimits.maximumIdentityBytes)
        else { return nil }
        return (try LeaseDocument.decode(found.payload, key: fullKey(LeaseDocument.name)), found.etag)
    }

    /// The lease as it is in the bucket: its document, or `nil` when it is damaged, not sealed by
    /// the keyring or not a lease at all (`damage` says why), and its ETag; `nil` when there is none.
    func leaseAsStored() async throws -> (document: LeaseDocument?, etag: String, damage: ReplicationError?)? {
        let found: (body: [UInt8], etag: String)
        do {
            guard
                let read = try await client.getWithETag(
                    bucket: location.bucket, key: fullKey(LeaseDocument.name),
                    maximumBytes: ObjectEnvelope.maximumBytes(payload: ReplicaLimits.maximumIdentityBytes))
            else { return nil }
            found = read
        } catch let error as ReplicationError where error.code == .damagedObject {
            // Larger than any lease: not read, and replaced like any other damaged lease.
            guard let etag = try await client.etag(bucket: location.bucket, key: fullKey(LeaseDocument.name)) else {
                return nil
            }
            return (nil, etag, error)
        }
        do {
            let payload = try open(found.body, name: LeaseDocument.name)
            return (try LeaseDocument.decode(payload, key: fullKey(LeaseDocument.name)), found.etag, nil)
        } catch let error as ReplicationError where ReplicaRestorer.passesOver(error) {
            return (nil, found.etag, error)
        }
    }

    /// Says that a standby watches the replica, so that an idle holder keeps a lease that expires
    /// (see ``ReplicationOptions/idleLeaseDuration``) rather than a dormant one. Written once,
    /// create-only: an existing mark is left as it is. A failure is logged as a warning.
    ///
    /// - Returns: whether the mark is there now.
    func markStandby(logger: Logger) async -> Bool {
        let mark = StandbyMark(
            host: ProcessInfo.processInfo.hostName,
            writtenMilliseconds: UInt64(max(0, Date().timeIntervalSince1970 * 1000)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            _ = try await put(StandbyMark.name, payload: Array(try encoder.encode(mark)), ifMatching: nil)
            return true
        } catch {
            logger.warning("marking \(location) as watched by a standby failed: \(error)")
            return false
        }
    }

    /// Removes the mark of ``markStandby(logger:)``, once this standby no longer waits (it was
    /// promoted, or stopped): another standby still waiting marks it again when it finds the lease
    /// dormant. A failure is logged as a warning.
    func removeStandbyMark(logger: Logger) async {
        do {
            try await delete(StandbyMark.name)
        } catch {
            logger.warning("removing \(location)\(StandbyMark.name) failed: \(error)")
        }
    }

    /// Whether a standby has marked the replica (see ``markStandby(logger:)``): only whether the object
    /// is there counts, never what it says.
    func hasStandby() async throws -> Bool {
        try await client.etag(bucket: location.bucket, key: fullKey(StandbyMark.name)) != nil
    }

    /// Writes the lease only if it is still as it was seen (`etag`), or, without one, only if there
    /// is none; the new ETag, or `nil` when it changed (or appeared) in between.
    func writeLease(_ document: LeaseDocument, ifMatching etag: String?) async throws -> String? {
        try await put(LeaseDocument.name, payload: try LeaseDocument.encode(document), ifMatching: etag)
    }
}

/// What `standby.json` holds: that a standby follows the replica to take over, for people. A
/// holder only asks whether it is there.
struct StandbyMark: Codable, Sendable {
    var format = "statejournal-replica-standby"
    var version = 1
    /// The standby's host name, for people.
    var host: String?
    /// When the standby wrote this, in milliseconds since 1970 UTC, for people.
    var writtenMilliseconds: UInt64

    static let name = "standby.json"
}
