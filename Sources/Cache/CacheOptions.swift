// SPDX-License-Identifier: MIT

/// What happens to records of a device with no member paired to it.
public enum UnpairedRecordPolicy: String, Sendable, Equatable {
    /// They are synced with `client_id` null.
    case send
    /// They wait in the cache; pairing the device assigns them its member.
    case hold
}

/// Which records retention may delete, and when.
public struct RetentionPolicy: Sendable, Equatable {
    /// Delivered records whose timestamp is older than this are deleted.
    public var maximumAge: Duration
    /// While the database uses more than this many bytes, the oldest delivered records go.
    public var maximumBytes: Int64
    /// Lets both rules delete pending and quarantined records too (data loss: off by default).
    public var deleteUnsynced: Bool

    public init(maximumAge: Duration = .seconds(7 * 86_400), maximumBytes: Int64 = 512 * 1_048_576, deleteUnsynced: Bool = false) {
        self.maximumAge = maximumAge
        self.maximumBytes = maximumBytes
        self.deleteUnsynced = deleteUnsynced
    }
}

/// How a `RecordCache` is opened.
public struct CacheOptions: Sendable {
    /// Longest time an appended record waits before its transaction commits.
    public var groupCommitInterval: Duration
    /// A transaction commits as soon as this many records wait, whatever the time.
    public var groupCommitRecords: Int
    public var unpaired: UnpairedRecordPolicy
    public var retention: RetentionPolicy
    /// 32-byte AES-256-GCM key for record payloads; nil stores them in clear.
    public var encryptionKey: [UInt8]?
    /// Create the file (and its directory) when absent; false makes a missing cache an error.
    public var create: Bool
    /// How long to wait for another process's write lock before failing (`blegate cache
    /// prune` beside a running gateway).
    public var busyTimeout: Duration
    /// Records that may wait in memory while commits fail (a full disk); beyond it the
    /// oldest waiting ones are dropped and counted. 10,000 is about five minutes of 30
    /// straps, some 8 MiB.
    public var maxBufferedRecords: Int

    public init(groupCommitInterval: Duration = .milliseconds(250), groupCommitRecords: Int = 1000,
                unpaired: UnpairedRecordPolicy = .send, retention: RetentionPolicy = RetentionPolicy(),
                encryptionKey: [UInt8]? = nil, create: Bool = true, busyTimeout: Duration = .seconds(10),
                maxBufferedRecords: Int = 10_000) {
        self.maxBufferedRecords = maxBufferedRecords
        self.groupCommitInterval = groupCommitInterval
        self.groupCommitRecords = groupCommitRecords
        self.unpaired = unpaired
        self.retention = retention
        self.encryptionKey = encryptionKey
        self.create = create
        self.busyTimeout = busyTimeout
    }
}

