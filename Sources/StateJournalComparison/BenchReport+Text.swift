import Foundation

extension BenchReport {
    /// The report as the tables `statejournal bench` prints.
    public var text: String {
        var lines: [String] = []
        lines.append("statejournal bench: \(plan)")
        lines.append("machine: \(machine.processors) cores, \(machine.system)")
        lines.append(
            """
            ratios are against journal-interval (×: how many times the journal's time); the second restore column is \
            after compaction
            """
        )
        for figure in preservation {
            lines.append("")
            lines.append(
                """
                N = \(figure.objects.grouped) objects, K = \(figure.changed) (\(figure.changedPerPass.grouped) per \
                pass), \(figure.passes.grouped) passes
                """
            )
            let header = [
                "contender".padded(20), "pass".leftPadded(10), "×".leftPadded(9), "restore".leftPadded(10),
                "×".leftPadded(8),
                "bytes".leftPadded(13), "compacted".leftPadded(12), "restore".leftPadded(10), "×".leftPadded(8),
                "restore mem".leftPadded(12),
            ]
            lines.append(header.joined(separator: " "))
            for contender in figure.contenders {
                let row = [
                    contender.name.padded(20),
                    Self.duration(contender.passSeconds).leftPadded(10),
                    Self.ratio(contender.passRatioToJournal).leftPadded(9),
                    (contender.restoreSeconds.map(Self.duration) ?? "-").leftPadded(10),
                    Self.ratio(contender.restoreRatioToJournal).leftPadded(8),
                    (contender.bytesOnDisk.map { $0.grouped } ?? "-").leftPadded(13),
                    (contender.bytesAfterCompaction.map { $0.grouped } ?? "-").leftPadded(12),
                    (contender.restoreAfterCompactionSeconds.map(Self.duration) ?? "-").leftPadded(10),
                    Self.ratio(contender.restoreAfterCompactionRatioToJournal).leftPadded(8),
                    (contender.restorePeakMemoryBytes.map(Self.megabytes) ?? "-").leftPadded(12),
                ]
                lines.append(row.joined(separator: " "))
            }
        }
        lines.append("")
        lines.append("One-entry epochs per second (SQLite: one row per transaction)")
        lines.append(
            [
                "contender".padded(20), "writers".leftPadded(7), "epochs/s".leftPadded(10), "ratio".leftPadded(9),
                "  against".padded(28), "of limit".leftPadded(9), "  limit",
            ]
            .joined(separator: " "))
        for rate in commitRates {
            lines.append(
                [
                    rate.name.padded(20), String(rate.writers).leftPadded(7),
                    Int(rate.epochsPerSecond.rounded()).grouped.leftPadded(10),
                    Self.ratio(rate.ratio).leftPadded(9), ("  " + (rate.comparedWith ?? "")).padded(28),
                    Self.ratio(rate.ratioToLimit).leftPadded(9), "  " + (rate.limit ?? ""),
                ].joined(separator: " "))
        }
        if let replay {
            lines.append("")
            lines.append(
                """
                Replay of \(replay.objects.grouped) objects over \(replay.epochs.grouped) epochs: \
                \(replay.entryBytes.grouped) bytes of entries in \(Self.duration(replay.seconds)), \
                \(String(format: "%.0f", replay.megabytesPerSecond)) MB/s
                """
            )
        }
        lines.append("")
        lines.append("Bytes on disk: the journal against lz4 -1 of the same entries concatenated")
        lines.append(
            [
                "scenario".padded(44), "entries".leftPadded(8), "raw states".leftPadded(11), "journal".leftPadded(10),
                "lz4 states".leftPadded(11),
                "ratio".leftPadded(6), "lz4 entries".leftPadded(12), "ratio".leftPadded(6),
            ].joined(separator: " "))
        for result in compression {
            lines.append(
                [
                    result.scenario.padded(44), String(result.entries).leftPadded(8),
                    String(result.rawStateBytes).leftPadded(11),
                    String(result.journalBytes).leftPadded(10), String(result.lz4Bytes).leftPadded(11),
                    String(format: "%.3f", result.ratioToLZ4).leftPadded(6),
                    String(result.lz4EntryBytes).leftPadded(12),
                    String(format: "%.3f", result.ratioToLZ4Entries).leftPadded(6),
                ].joined(separator: " "))
        }
        if let latency = compactionLatency {
            lines.append("")
            lines.append(
                """
                Commit latency of one-entry epochs (interval) with \(latency.objects.grouped) objects, without and \
                during \(latency.compactions) compactions
                """
            )
            lines.append(
                """
                  without: \(latency.commitsWithout.grouped) commits, p50 \
                \(Self.duration(latency.p50WithoutMicroseconds / 1e6)), p99 \
                \(Self.duration(latency.p99WithoutMicroseconds / 1e6)), max \
                \(Self.duration(latency.maxWithoutMicroseconds / 1e6))
                """
            )
            lines.append(
                """
                  during:  \(latency.commitsDuring.grouped) commits, p50 \
                \(Self.duration(latency.p50DuringMicroseconds / 1e6)), p99 \
                \(Self.duration(latency.p99DuringMicroseconds / 1e6)), max \
                \(Self.duration(latency.maxDuringMicroseconds / 1e6)); p99 ratio \
                \(String(format: "%.2f", latency.p99Ratio))
                """
            )
        }
        if let footprint {
            lines.append("")
            lines.append(
                """
                Bytes on disk over \(footprint.epochs.grouped) epochs of \(footprint.changedPerEpoch) changed objects \
                out of \(footprint.objects.grouped), automatic compaction (\(footprint.compactions) checkpoints \
                written):
                """
            )
            lines.append(
                """
                  at most \(Int(footprint.maximumStoreBytes).grouped) bytes, \(Int(footprint.finalStoreBytes).grouped) \
                at the end; the current checkpoint (the live state, compressed) is \
                \(Int(footprint.checkpointBytes).grouped): at most \
                \(String(format: "%.1f", footprint.maximumOverCheckpoint))× it
                """
            )
        }
        lines.append("")
        lines.append("Targets of issues 4 and 6")
        for target in targets {
            let verdict = target.met.map { $0 ? "met   " : "MISSED" } ?? "n/a   "
            let bound = (target.comparison == "atLeast" ? "≥ " : "≤ ") + Self.number(target.threshold)
            lines.append("\(verdict) \(target.measured.map(Self.number) ?? "-") (\(bound))  \(target.target)")
        }
        return lines.joined(separator: "\n")
    }

    static func duration(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 1e-3 { return String(format: "%.2f ms", seconds * 1e3) }
        return String(format: "%.1f µs", seconds * 1e6)
    }

    static func ratio(_ value: Double?) -> String {
        guard let value else { return "-" }
        return number(value) + "×"
    }

    static func number(_ value: Double) -> String {
        if value >= 100 { return Int(value.rounded()).grouped }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}

extension String {
    func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
