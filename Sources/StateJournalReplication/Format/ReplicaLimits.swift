/// The bounds every reader of a replica holds the bucket to, whatever it holds.
///
/// A bucket is written by whoever has credentials for it, so a restore, a shipper that reads
/// another shipper's generations, and every other reader of a replica treat its bytes as hostile:
/// nothing larger than these limits is read, no number beyond them is used, and a body is never
/// read past the size its generation declares.
public enum ReplicaLimits {
    /// The largest generation object's payload read: 8 MiB, its document and the bytes it carries
    /// inline together (a generation of a store with thousands of files is a few hundred kilobytes;
    /// decoding one takes up to about 30 times the document's size).
    public static let maximumGenerationBytes = 8 << 20
    /// The most bytes of files a generation carries inline (version 3): 4 MiB. A pass whose new
    /// bytes fit costs one request, its generation; larger ones go up as objects of their own.
    public static let maximumInlineBytes = 4 << 20
    /// The largest identity document (`replica.json`) read: 64 KiB.
    public static let maximumIdentityBytes = 64 << 10
    /// The largest single object a generation may name: 2 GiB.
    public static let maximumObjectBytes: Int64 = 1 << 31
    /// The largest store file a generation may describe: 1 TiB.
    public static let maximumFileBytes: Int64 = 1 << 40
    /// The most objects one file of a generation may be made of.
    public static let maximumObjectsPerFile = 4096
    /// The most files one generation may name.
    public static let maximumFiles = 1 << 17
    /// The most unusable generations (damaged, forged, not sealed by the key) a restore passes over,
    /// newest first, before it refuses the replica: each costs a request, so that a writer adding
    /// generations cannot make a restore take time in proportion to them.
    public static let maximumGenerationsPassedOver = 32
    /// The largest epoch, file sequence or generation number accepted: 2^62, as in the store.
    public static let maximumCounter: UInt64 = 1 << 62
    /// How many payload bytes a restore fetches ahead of what it writes: objects of up to
    /// ``streamingPieceBytes`` are fetched in parallel while their declared sizes add up to at most
    /// this, and the ranged pieces of a larger one are fetched in parallel, up to
    /// `streamingPiecesInFlight` of them, while their sizes add up to at most this too, and written
    /// in order as they come: 32 MiB each. An object or a piece is held about three times over for a
    /// moment as it arrives and is opened (the response, its bytes, its payload), so a restore's
    /// transfers hold about six times this at most.
    public static let fetchWindowBytes: Int64 = 32 << 20
    /// How many objects a restore fetches at once, at most.
    public static let fetchConcurrency = 8

    /// Objects larger than this are fetched in ranged pieces of about this size and written as
    /// they come, checked piece by piece (chunk by chunk when encrypted): 8 MiB.
    public static let streamingPieceBytes = 8 << 20

    /// How many ranged pieces of a large object a restore fetches at once, at most: 4 (with
    /// ``fetchWindowBytes``, 4 pieces of 8 MiB). The pieces are fetched in parallel and checked and
    /// written in order, a piece that arrives early waiting for the ones before it.
    static let streamingPiecesInFlight = 4

    /// The slowest a response may arrive, by default: 1 KiB a second, averaged over
    /// ``transferRateWindow``. A request whose response has brought fewer than 30 KiB in the last 30
    /// seconds, without being complete, is cancelled with ``ReplicationError/Code/tooSlow``, so that
    /// a server (or someone on the path) that sends a few bytes at a time, or stalls just short of
    /// the idle timeout, cannot hold a restore for ever. A link of 64 kbit/s shared by
    /// ``fetchConcurrency`` transfers still gets about 1 KiB/s each. Change it with
    /// ``S3Configuration/minimumRate``, or `STATEJOURNAL_S3_MINIMUM_RATE` for the tool.
    public static let minimumTransferRate = 1024
    /// The window ``minimumTransferRate`` is averaged over: 30 seconds, the idle timeout.
    public static let transferRateWindow: Duration = .seconds(30)

    /// The payload of an encrypted object is sealed in chunks of this size (the last one shorter),
    /// each authenticated on its own, so that a reader holds one chunk of it at a time: 1 MiB.
    public static let sealedChunkBytes = 1 << 20

    /// Bytes an envelope adds around a payload, at most, but for the tags of version 2 chunks:
    /// header, key id, nonce and tag, SHA-256.
    static let envelopeOverhead = 7 + 255 + 12 + 16 + 32
}

/// Text from the bucket, made safe to print: control characters (which could move a terminal's
/// cursor, clear its screen or set its title) and bidirectional overrides are written as `\u{…}`
/// escapes, and the text is cut after 200 characters.
func printable(_ text: some StringProtocol) -> String {
    var result = ""
    for scalar in text.unicodeScalars.prefix(200) {
        let value = scalar.value
        // C0 and C1 controls, line and paragraph separators, and the bidirectional overrides and
        // isolates, which can make a name read as another.
        if value < 0x20 || (0x7F...0x9F).contains(value) || (0x2028...0x202E).contains(value)
            || (0x2066...0x2069).contains(value) || value == 0x200E || value == 0x200F
        {
            result += "\\u{" + String(value, radix: 16) + "}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    if text.unicodeScalars.count > 200 { result += "…" }
    return result
}
