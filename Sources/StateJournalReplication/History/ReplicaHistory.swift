/// The rules that decide which generations of a replica are its history: the one place restores,
/// followers, promotion, retention and the shipper itself ask.
///
/// Object storage has no transaction across keys, so a lease cannot stop a paused or partitioned
/// holder from writing after another took over: safety comes from what readers accept.
///
/// - Every generation is written create-only under a number above every number its writer saw, and
///   (from version 4) names its ``ReplicaGeneration/predecessor``, the generation it builds on.
/// - A holder's first generation in a term records where the term began: its number and its
///   ``ReplicaGeneration/TermStart/basis``, the generation it builds on: for a promoted standby, the
///   last generation it applied; for another shipper, the newest of the history it read after
///   taking the lease and checked its store against.
/// - The history is read from its *head*, the newest generation (see ``headIndex(_:)``). Walking
///   the head's term starts from the newest, each term covers its start through the generation
///   the next term began from (or the head, for the head's own term). A generation is in the
///   history when its term covers its number; every other generation is an *orphan*: a late
///   write of a holder that had lost its lease, or a term that never began. Orphans are never
///   restored from, applied or built on, and are reported with the epochs they hold.
/// - A follower applies a generation only when it continues what it applied (``continuation(from:to:)``):
///   its predecessor is that generation, with the same digest, or that generation is in its
///   history; and it never goes back to an earlier last epoch.
enum ReplicaHistory {
    /// One run of a term in the history: the generations numbered `from…through` of that term.
    struct Span: Equatable, Sendable {
        var term: UInt64
        var from: UInt64
        var through: UInt64
    }

    /// Where a generation stands in the history that `head` ends.
    enum Placement: Equatable, Sendable {
        /// It is in the history.
        case member
        /// It is not: why, for people.
        case orphan(String)

        var isMember: Bool { self == .member }
    }

    /// The runs of terms the history ending at `head` is made of, newest first, and the highest
    /// number below them that older generations (of terms before the oldest remembered start, or
    /// written before leases) may have and still be in it.
    static func spans(under head: ReplicaGeneration) -> (spans: [Span], olderThrough: UInt64?) {
        let starts = head.terms ?? []
        guard !starts.isEmpty else { return ([], head.generation) }
        var spans: [Span] = []
        var upper = head.generation
        var index = starts.count - 1
        while index >= 0 {
            let start = starts[index]
            if start.generation <= upper {
                spans.append(Span(term: start.term, from: start.generation, through: upper))
            }
            guard let basis = start.basis else {
                // Before version 4: a term ends where the next began.
                guard start.generation > 0 else { return (spans, nil) }
                upper = min(upper, start.generation - 1)
                index -= 1
                continue
            }
            upper = basis
            // The term the basis belongs to is the newest that began at or before it; terms that
            // began after it and before this one never made it into the history.
            index = starts[..<index].lastIndex { $0.generation <= basis } ?? -1
        }
        return (spans, upper)
    }

    /// Where `generation` stands in the history that `head` ends.
    static func placement(of generation: ReplicaGeneration, under head: ReplicaGeneration) -> Placement {
        if generation.generation == head.generation {
            return generation == head ? .member : .orphan("another document is stored at the head's number")
        }
        guard generation.generation < head.generation else {
            return .orphan("it is numbered after generation \(head.generation), the newest of the history")
        }
        let term = generation.term ?? 0
        let (spans, olderThrough) = spans(under: head)
        if let span = spans.first(where: { $0.term == term }) {
            if (span.from...span.through).contains(generation.generation) { return .member }
            if generation.generation > span.through {
                return .orphan(
                    "it is of term \(term), written after generation \(span.through), from which a newer term began")
            }
            return .orphan("it is of term \(term), numbered before that term began at generation \(span.from)")
        }
        let oldestRemembered = (head.terms ?? []).first?.term ?? (head.term ?? 0) + 1
        if term < oldestRemembered, let olderThrough, generation.generation <= olderThrough { return .member }
        if term < oldestRemembered, olderThrough == 0 {
            return .orphan("it is of term \(term), and a newer term began on an empty replica")
        }
        if term < oldestRemembered, let olderThrough {
            return .orphan(
                "it is of term \(term), written after generation \(olderThrough), from which a newer term began")
        }
        return .orphan("its term \(term) never began in the history")
    }

    /// The index, in `generations` (read newest number first), of the history's head: the newest
    /// generation, unless the one just below it is of a newer term and shows it is an orphan (a
    /// late write that landed at the newest number), when that one is. `nil` when there is none.
    static func headIndex(_ generations: [ReplicaGeneration]) -> Int? {
        guard let newest = generations.first else { return nil }
        if generations.count > 1, (generations[1].term ?? 0) > (newest.term ?? 0),
            !placement(of: newest, under: generations[1]).isMember
        {
            return 1
        }
        return 0
    }

    /// What a follower that applied `applied` (whose payload has the SHA-256 `appliedSHA256`, when
    /// known) does with `next`, a later generation.
    enum Continuation: Equatable, Sendable {
        /// It continues what was applied: apply it.
        case extends
        /// It does not: what was applied is not in its history, or it would cut the copy back.
        case diverged(String)
    }

    /// Whether `next` continues `applied`: it builds on it (same number and digest), or `applied` is
    /// in its history; and it does not end at an earlier epoch.
    static func continuation(from applied: ReplicaGeneration, sha256 appliedSHA256: String?, to next: ReplicaGeneration)
        -> Continuation
    {
        if let predecessor = next.predecessor, predecessor.generation == applied.generation {
            if let appliedSHA256, predecessor.sha256 != appliedSHA256 {
                return .diverged(
                    "generation \(next.generation) builds on another document stored as generation \(applied.generation) than the one applied"
                )
            }
        } else if case .orphan(let why) = placement(of: applied, under: next) {
            return .diverged(
                "generation \(applied.generation), which this copy holds, is not in the replica's history as generation \(next.generation) tells it: \(why)"
            )
        }
        if let mine = applied.lastEpoch, (next.lastEpoch ?? 0) < mine {
            return .diverged(
                "generation \(next.generation) ends at epoch \(next.lastEpoch.map(String.init) ?? "none"), before epoch \(mine), which this copy holds"
            )
        }
        return .extends
    }

    /// The number a writer takes next: one above every number it has seen listed or written, and
    /// above the generation it builds on, so that it never reuses a number a late write may hold.
    static func nextNumber(highestSeen: UInt64, building base: ReplicaGeneration?) -> UInt64 {
        max(highestSeen, base?.generation ?? 0) + 1
    }

    /// Whether a writer of `term` that read `generations` is fenced: one of them is of a newer term,
    /// so another shipper took over, and this one never writes again.
    static func isFenced(term: UInt64, reading generations: [ReplicaGeneration]) -> Bool {
        generations.contains { ($0.term ?? 0) > term }
    }

    /// The term starts a generation numbered `number` of term `term` carries when it builds on
    /// `base`: the base's, with this term's start appended when the base is of another term. A
    /// term that builds on nothing began on an empty replica: its basis is 0 (generations are
    /// numbered from 1), so that no generation of an older term landed before it is in its history
    /// (a `nil` basis is a term start of before version 4, below which older generations are).
    static func termStarts(term: UInt64, number: UInt64, building base: ReplicaGeneration?) -> [ReplicaGeneration
        .TermStart]
    {
        var starts = base?.terms ?? []
        if starts.last?.term != term || base?.term != term {
            starts.removeAll { $0.term >= term }
            starts.append(ReplicaGeneration.TermStart(term: term, generation: number, basis: base?.generation ?? 0))
        }
        return Array(starts.suffix(ReplicaGeneration.rememberedTerms))
    }
}
