import Foundation
import StateJournal

// NSCoder's unkeyed methods, as NSKeyedArchiver implements them on a keyed archive: each value goes
// under the next of the keys `$0`, `$1`… of the object's coder, and is read back in the same order.
// The overrides themselves are in the class body (RestorationCoder.swift), as Swift requires.

extension RestorationCoder {
    /// The key of the next unkeyed value encoded.
    func nextUnkeyedEncodeKey() -> String {
        defer { unkeyedEncodeCount += 1 }
        return "$\(unkeyedEncodeCount)"
    }

    /// The key of the next unkeyed value decoded.
    func nextUnkeyedDecodeKey() -> String {
        defer { unkeyedDecodeCount += 1 }
        return "$\(unkeyedDecodeCount)"
    }

    /// `length` bytes from `bytes` (none when it is `nil` or `length` is not positive).
    static func data(_ bytes: UnsafeRawPointer?, _ length: Int) -> Data {
        guard let bytes, length > 0 else { return Data() }
        return Data(bytes: bytes, count: length)
    }

    /// The bytes saved under `key`; `nil` when it is missing or null, and `nil` with a diagnostic
    /// when it holds something else.
    func bytes(_ key: String) -> Data? {
        switch values[key] {
        case nil, .null?: return nil
        case .data(let data)?: return data
        case let other?:
            note(.typeMismatch, key, "the saved \(other.kindName) is not bytes")
            return nil
        }
    }

    /// A copy of `bytes` that lives as long as the coder, for the decoders that return a pointer.
    func held(_ bytes: Data, extra: Int = 0) -> UnsafeMutableRawPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Swift.max(bytes.count + extra, 1), alignment: MemoryLayout<Int>.alignment)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.copyBytes(from: bytes)
        heldBuffers.append(buffer)
        return buffer.baseAddress!
    }

    /// Decodes the next unkeyed value as bytes, as `NSCoder.decodeBytes(withReturnedLength:)`
    /// reads what `encodeBytes(_:length:)` wrote.
    ///
    /// - Parameter length: Set to the number of bytes (0 when there are none).
    /// - Returns: The bytes, valid as long as the coder is (do not keep the coder after the call it
    ///   was passed to); `nil` past the last unkeyed value, or when it is not bytes (with a
    ///   ``CoderDiagnostic``).
    public func decodeBytes(withReturnedLength length: UnsafeMutablePointer<Int>) -> UnsafeMutableRawPointer? {
        length.pointee = 0
        guard let data = bytes(nextUnkeyedDecodeKey()) else { return nil }
        length.pointee = data.count
        return held(data)
    }

    /// Decodes the bytes saved under `key`, as `NSCoder.decodeBytes(forKey:returnedLength:)`.
    ///
    /// - Parameters:
    ///   - key: The key it was encoded under.
    ///   - length: Set to the number of bytes (0 when there are none).
    /// - Returns: The bytes, valid as long as the coder is; `nil` when the key is missing or does
    ///   not hold bytes (with a ``CoderDiagnostic`` for the latter).
    public func decodeBytes(forKey key: String, returnedLength length: UnsafeMutablePointer<Int>?) -> UnsafePointer<
        UInt8
    >? {
        length?.pointee = 0
        guard let data = bytes(key) else { return nil }
        length?.pointee = data.count
        return UnsafePointer(held(data).assumingMemoryBound(to: UInt8.self))
    }

    /// Decodes the next unkeyed value as a value of Objective-C type `type` into `address`, as
    /// `NSCoder.decodeValue(ofObjCType:at:size:)`: the value is written only when `size` bytes
    /// hold it.
    ///
    /// - Parameters:
    ///   - type: One type code, as `@encode` writes it.
    ///   - address: Where to put the value.
    ///   - size: The bytes at `address`; a smaller size than the type's fails through
    ///     ``failWithError(_:)`` and writes nothing.
    public func decodeValue(ofObjCType type: UnsafePointer<CChar>, at address: UnsafeMutableRawPointer, size: Int) {
        decodeValue(String(cString: type), at: address, size: size)
    }

    // MARK: - Objective-C type codes

    /// The Objective-C types the unkeyed value methods encode: one type code, or a C array of one.
    enum ObjCType {
        case object, `class`, cString
        case int8, uint8, int16, uint16, int32, uint32, int64, uint64, float, double, bool
        indirect case array(count: Int, element: ObjCType)

        init?(_ code: String) {
            if code.hasPrefix("["), code.hasSuffix("]") {
                let inner = code.dropFirst().dropLast()
                let digits = inner.prefix { $0.isASCII && $0.isNumber }
                guard let count = Int(digits), let element = ObjCType(String(inner.dropFirst(digits.count))),
                    element.isScalar
                else { return nil }
                self = .array(count: count, element: element)
                return
            }
            switch code {
            case "@": self = .object
            case "#": self = .class
            case "*": self = .cString
            case "c": self = .int8
            case "C": self = .uint8
            case "s": self = .int16
            case "S": self = .uint16
            // `l` and `L` are 32 bits wide in type codes, as NSKeyedArchiver reads them.
            case "i", "l": self = .int32
            case "I", "L": self = .uint32
            case "q": self = .int64
            case "Q": self = .uint64
            case "f": self = .float
            case "d": self = .double
            case "B": self = .bool
            default: return nil
            }
        }

        var isScalar: Bool {
            if case .array = self { return false }
            return true
        }

        /// The bytes one value of the type takes.
        var size: Int {
            switch self {
            case .object: MemoryLayout<Any?>.size
            case .class: MemoryLayout<AnyClass>.size
            case .cString: MemoryLayout<UnsafePointer<CChar>?>.size
            case .int8, .uint8, .bool: 1
            case .int16, .uint16: 2
            case .int32, .uint32, .float: 4
            case .int64, .uint64, .double: 8
            case .array(let count, let element): count * element.stride
            }
        }

        var stride: Int {
            switch self {
            case .object: MemoryLayout<Any?>.stride
            case .class: MemoryLayout<AnyClass>.stride
            case .cString: MemoryLayout<UnsafePointer<CChar>?>.stride
            default: size
            }
        }
    }

    /// Why `code` is not an Objective-C type the coder encodes, in words.
    private func unsupportedTypeMessage(_ code: String, _ method: String) -> String {
        let what = code.hasPrefix("{") ? "a structure" : code.hasPrefix("(") ? "a union" : "a type it does not know"
        return """
            \(method) cannot code the Objective-C type "\(code)" (\(what)); nothing was coded. Code the fields one \
            by one (encode(_:forKey:) for each), or encode the value as an object.
            """
    }

    func encodeValue(_ code: String, at address: UnsafeRawPointer) {
        let key = nextUnkeyedEncodeKey()
        guard let type = ObjCType(code) else {
            fail(Self.invalidValue(unsupportedTypeMessage(code, "encodeValue(ofObjCType:at:)")), key: key)
            return
        }
        if case .array(let count, let element) = type {
            let items = (0..<count).map { encoded(element, at: address + $0 * element.stride, key) ?? .null }
            store(.array(items), forKey: key)
        } else if let value = encoded(type, at: address, key) {
            store(value, forKey: key)
        }
    }

    /// The value of one scalar at `address`; `nil` (with a diagnostic) when it is not stored.
    private func encoded(_ type: ObjCType, at address: UnsafeRawPointer, _ key: String) -> RestorableValue? {
        switch type {
        case .object:
            guard let object = address.load(as: Any?.self) else { return .null }
            return storedValue(of: object, key)
        case .class: return .string(TypeNames.name(of: address.load(as: AnyClass.self)))
        case .cString:
            return address.load(as: UnsafePointer<CChar>?.self).map { .string(String(cString: $0)) } ?? .null
        case .int8: return .int(Int64(address.loadUnaligned(as: Int8.self)))
        case .uint8: return .int(Int64(address.loadUnaligned(as: UInt8.self)))
        case .int16: return .int(Int64(address.loadUnaligned(as: Int16.self)))
        case .uint16: return .int(Int64(address.loadUnaligned(as: UInt16.self)))
        case .int32: return .int(Int64(address.loadUnaligned(as: Int32.self)))
        case .uint32: return .int(Int64(address.loadUnaligned(as: UInt32.self)))
        case .int64: return .int(address.loadUnaligned(as: Int64.self))
        case .uint64: return storedValue(of: NSNumber(value: address.loadUnaligned(as: UInt64.self)), key)
        case .float: return .double(Double(address.loadUnaligned(as: Float.self)))
        case .double: return .double(address.loadUnaligned(as: Double.self))
        case .bool: return .bool(address.loadUnaligned(as: Bool.self))
        case .array: return nil
        }
    }

    func decodeValue(_ code: String, at address: UnsafeMutableRawPointer, size: Int?) {
        let key = nextUnkeyedDecodeKey()
        guard let type = ObjCType(code) else {
            fail(Self.invalidValue(unsupportedTypeMessage(code, "decodeValue(ofObjCType:at:)")), key: key)
            return
        }
        if let size, size < type.size {
            fail(
                Self.invalidValue(
                    "decodeValue(ofObjCType:at:size:) was given \(size) bytes for \"\(code)\", which takes \(type.size); nothing was decoded. Pass the size of the value's type."
                ), key: key)
            return
        }
        guard let value = values[key] else { return }
        if case .array(let count, let element) = type {
            guard case .array(let items) = value, items.count == count else {
                note(.typeMismatch, key, "the saved \(value.kindName) is not a C array of \(count) values")
                return
            }
            for (index, item) in items.enumerated() {
                decode(item, as: element, at: address + index * element.stride, key)
            }
        } else {
            decode(value, as: type, at: address, key)
        }
    }

    /// Writes `value` as a `type` at `address`; leaves it as it is (with a diagnostic) when the
    /// value is not one.
    private func decode(_ value: RestorableValue, as type: ObjCType, at address: UnsafeMutableRawPointer, _ key: String)
    {
        func store<T>(_ read: T?) {
            if let read { address.storeBytes(of: read, as: T.self) }
        }
        switch type {
        case .object: address.assumingMemoryBound(to: Any?.self).pointee = plainObject(value, key)
        case .class:
            guard case .string(let name) = value else {
                note(.typeMismatch, key, "the saved \(value.kindName) is not a class name")
                return
            }
            guard let cls = resolver?.registeredCodingClass(named: name) else {
                note(
                    .classNotAllowed, key,
                    "\(name) is not a registered NSCoding class; register it with registerCodingClass(_:) to decode it as a class"
                )
                return
            }
            address.assumingMemoryBound(to: AnyClass.self).pointee = cls
        case .cString:
            switch value {
            case .null: address.assumingMemoryBound(to: UnsafePointer<CChar>?.self).pointee = nil
            case .string(let string):
                let bytes = held(Data(string.utf8), extra: 1)
                address.assumingMemoryBound(to: UnsafePointer<CChar>?.self).pointee = UnsafePointer(
                    bytes.assumingMemoryBound(to: CChar.self))
            default: note(.typeMismatch, key, "the saved \(value.kindName) is not a string")
            }
        case .int8: store(integer(value, key) as Int8?)
        case .uint8: store(integer(value, key) as UInt8?)
        case .int16: store(integer(value, key) as Int16?)
        case .uint16: store(integer(value, key) as UInt16?)
        case .int32: store(integer(value, key) as Int32?)
        case .uint32: store(integer(value, key) as UInt32?)
        case .int64: store(integer(value, key) as Int64?)
        case .uint64: store(integer(value, key) as UInt64?)
        case .float: store(floatingPoint(value, key).map(Float.init))
        case .double: store(floatingPoint(value, key))
        case .bool:
            switch value {
            case .bool(let bool): store(bool)
            case .int, .double: store((floatingPoint(value, key) ?? 0) != 0)
            default: note(.typeMismatch, key, "the saved \(value.kindName) is not a Bool")
            }
        case .array: break
        }
    }
}
