import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// Client-side encryption with AES-GCM.
    @Suite struct EncryptionTests {
        static func key(_ id: String, _ fill: UInt8) throws -> ReplicationKey {
            try ReplicationKey(id: id, bytes: [UInt8](repeating: fill, count: 32))
        }

        @Test func noObjectInTheBucketHoldsAKnownPlaintextState() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "secret")
            let directory = try temporaryDirectory("encrypted")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            // A state that LZ4 leaves readable: distinct words, stored raw in small entries.
            let secret = "correct horse battery staple 8d41f0"
            let journal = try Journal.open(at: storeURL, options: JournalOptions(segmentSizeLimit: 4096))
            for index in 0..<40 {
                let epoch = try journal.beginEpoch()
                try epoch.put(RestorationPath("Vault", "Item-\(index)"), Array("\(secret) #\(index)".utf8))
                try epoch.commit()
            }
            _ = try journal.compact()
            let keyring = ReplicationKeyring(current: try Self.key("k1", 7))
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: ReplicationOptions(keyring: keyring))
            try await shipper.shipOnce()
            try commit(journal, count: 3, marker: secret)
            try await shipper.shipOnce()

            let needle = Array(secret.utf8)
            let objects = try await client.list(bucket: location.bucket, prefix: location.prefix)
            #expect(objects.count > 3)
            for object in objects {
                let bytes = try #require(try await client.get(bucket: location.bucket, key: object.key))
                #expect(!contains(bytes, needle), "\(object.key) holds the plaintext")
            }
            // The same store shipped unencrypted does show it: the check above can see plaintext.
            let plainLocation = S3Location(bucket: location.bucket, prefix: "plain")
            try await ReplicationShipper(store: storeURL, to: plainLocation, configuration: gateway.configuration())
                .shipOnce()
            var seen = false
            for object in try await client.list(bucket: location.bucket, prefix: plainLocation.prefix) {
                if contains(try await client.get(bucket: location.bucket, key: object.key) ?? [], needle) {
                    seen = true
                }
            }
            #expect(seen)

            let restored = directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(
                from: location, configuration: gateway.configuration(), keyring: keyring
            )
            .restore(into: restored)
            #expect(try JournalReader(at: restored).state().entries == journal.state().entries)
            #expect(report.verification.status == .clean)
            try journal.close()
        }

        @Test func aWrongKeyOrNoKeyIsAClearTypedErrorAndRotationKeepsOlderObjectsReadable() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "rotate")
            let directory = try temporaryDirectory("rotate")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let old = try Self.key("2025", 1)
            let new = try Self.key("2026", 2)
            try commit(journal, count: 3)
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: ReplicationOptions(keyring: ReplicationKeyring(current: old))
            ).shipOnce()
            try commit(journal, count: 3)
            // Rotated: new objects under the new key, the old key kept to read.
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: ReplicationOptions(keyring: ReplicationKeyring(current: new, older: [old]))
            ).shipOnce()

            let rotated = ReplicationKeyring(current: new, older: [old])
            let report = try await ReplicaRestorer(
                from: location, configuration: gateway.configuration(), keyring: rotated
            )
            .restore(into: directory.appendingPathComponent("ok"))
            #expect(try report.epoch.epoch == journal.history().last!.epoch)

            let wrong = ReplicationKeyring(current: try Self.key("2026", 9), older: [try Self.key("2025", 8)])
            let wrongError = await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(from: location, configuration: gateway.configuration(), keyring: wrong)
                    .restore(into: directory.appendingPathComponent("wrong"))
            }
            #expect(wrongError?.code == .wrongKey)
            #expect(wrongError?.message.contains("could not be decrypted with key 2026") == true)

            let missingError = await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: directory.appendingPathComponent("none"))
            }
            #expect(missingError?.code == .missingKey)

            let onlyNew = await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(
                    from: location, configuration: gateway.configuration(), keyring: ReplicationKeyring(current: new)
                ).restore(into: directory.appendingPathComponent("only-new"))
            }
            #expect(onlyNew?.code == .missingKey)
            #expect(onlyNew?.message.contains("2025") == true)
            try journal.close()
        }

        @Test func keysParseFromHexOrBase64AndNeverShowInDescriptions() throws {
            let hex = String(repeating: "ab", count: 32)
            let key = try ReplicationKey(parsing: "prod-1:\(hex)\n")
            #expect(key.id == "prod-1")
            #expect(!"\(key)".contains("ab"))
            let base64 = Data(repeating: 3, count: 32).base64EncodedString()
            #expect(try ReplicationKey(parsing: base64).id == "default")
            #expect(throws: ReplicationError.self) { try ReplicationKey(parsing: "x:short") }
        }

        func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
            guard haystack.count >= needle.count else { return false }
            for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
                if Array(haystack[start..<(start + needle.count)]) == needle { return true }
            }
            return false
        }
    }
}
