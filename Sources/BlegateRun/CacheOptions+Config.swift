// SPDX-License-Identifier: MIT
import Cache
import Config

extension CacheOptions {
    /// The cache settings of a gateway configuration (the key read separately, so a
    /// bad key file is reported as the config error it is).
    public init(configuration c: GatewayConfiguration, encryptionKey: [UInt8]?, create: Bool = true) {
        self.init(
            unpaired: c.backend.unpaired == .hold ? .hold : .send,
            retention: RetentionPolicy(maximumAge: c.cache.retention, maximumBytes: c.cache.maxSize,
                                       deleteUnsynced: c.cache.deleteUnsynced),
            encryptionKey: encryptionKey,
            create: create
        )
    }
}
