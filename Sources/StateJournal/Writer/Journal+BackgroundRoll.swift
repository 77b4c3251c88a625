import Foundation

/// Whether the interval sync thread has been asked to roll to a new segment.
enum BackgroundRollRequest: Equatable {
    /// No roll is asked for.
    case idle
    /// A commit found the active segment full and woke the sync thread to roll.
    case requested
    /// The sync thread's last roll failed: the next commit that finds the segment full rolls
    /// itself, so that the failure reaches a caller.
    case failed
}

extension Journal {
    /// How far past ``JournalOptions/segmentSizeLimit`` the active segment may grow while another
    /// thread rolls (the sync thread, or a compaction): a quarter of the limit. A commit that finds
    /// the segment larger waits for the roll under way, or rolls itself.
    var rollSlack: Int64 { Int64(options.segmentSizeLimit / 4) }

    /// Under ``Durability/interval(seconds:)``, asks the sync thread to roll to a new segment instead
    /// of rolling on the committing thread. Called with `condition` locked by ``beginEpoch()`` once
    /// the active segment is full and no roll is under way.
    ///
    /// A roll creates the next segment file and syncs the directory, then syncs the sealed segment
    /// and writes the manifest: milliseconds to tens of milliseconds of waiting for the disk, which
    /// a commit under this policy does not otherwise wait for. Handed to the sync thread, the only
    /// part of it that holds commits up is the switch itself (``performClaimedRoll(reservingCheckpoint:)``,
    /// step 2), which makes no system call that waits for the disk. Commits continue in the full
    /// segment meanwhile.
    ///
    /// - Returns: `true` when the sync thread rolls (and the caller goes on in the current
    ///   segment); `false` when the caller must roll itself: under another durability policy, when
    ///   the segment has grown ``rollSlack`` past the limit, or when the sync thread's last
    ///   roll failed.
    func handRollToSyncThread() -> Bool {
        guard syncInterval != nil, backgroundRoll != .failed,
            segment.size < Int64(options.segmentSizeLimit) + rollSlack
        else { return false }
        if backgroundRoll == .idle {
            backgroundRoll = .requested
            syncTimer.lock()
            rollWake = true
            syncTimer.broadcast()
            syncTimer.unlock()
        }
        return true
    }

    /// Rolls to a new segment on the sync thread, as ``handRollToSyncThread()`` asked. Called with no
    /// lock held.
    ///
    /// Does nothing when the journal closed or was poisoned meanwhile, or when another roll (a
    /// compaction's, or a commit's past the slack) started a new segment first. A failure is logged
    /// and makes the next commit that finds the segment full roll itself, which throws it to the
    /// caller if it happens again; a failed manifest write after the switch only leaves the manifest
    /// behind the seals, which the next change writes again.
    func performRequestedRoll() {
        condition.lock()
        guard backgroundRoll == .requested else {
            condition.unlock()
            return
        }
        guard !isClosed, poison == nil, state.roll == .none,
            segment.size >= Int64(options.segmentSizeLimit) && segment.size > Int64(SegmentHeader.size)
        else {
            backgroundRoll = .idle
            condition.unlock()
            return
        }
        claimRoll()
        let sealing = segment.header.sequence
        condition.unlock()
        let outcome = Result { try performClaimedRoll(reservingCheckpoint: false, syncingEvery: syncInterval) }
        condition.lock()
        let switched = segment.header.sequence != sealing
        // A switch sets the request back to idle; a failure before it leaves the next roll to a commit.
        if !switched && !isClosed && backgroundRoll == .requested { backgroundRoll = .failed }
        condition.unlock()
        guard case .failure(let error) = outcome else { return }
        if switched {
            // The seal leads readers and the next open to the new segment; the next change writes
            // the manifest again.
            logger.warning(
                "Writing the manifest after starting a new segment failed; the next change writes it again",
                metadata: ["error": "\(error)"])
        } else {
            logger.warning(
                "Starting a new segment on the sync thread failed; the next commit past the segment size limit tries again",
                metadata: ["error": "\(error)"])
        }
    }

}
