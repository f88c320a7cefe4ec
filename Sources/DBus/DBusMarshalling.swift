import CDBus

/// Type codes of the D-Bus Specification ("Type System"), as libdbus's `int` type codes: the ASCII
/// character of each type. Spelled out here because libdbus's macros carry casts Swift does not import.
enum DBusTypeCode {
    static let invalid: Int32 = 0
    static func code(_ character: Unicode.Scalar) -> Int32 { Int32(character.value) }
    static let byte = code("y"), boolean = code("b"), int16 = code("n"), uint16 = code("q")
    static let int32 = code("i"), uint32 = code("u"), int64 = code("x"), uint64 = code("t")
    static let double = code("d"), string = code("s"), objectPath = code("o"), signature = code("g")
    static let array = code("a"), structure = code("r"), dictionaryEntry = code("e"), variant = code("v")
    /// Basic types: the only ones allowed as dictionary keys.
    static let basicSignatures: Set<String> = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g"]
}

/// Writes and reads `DBusValue`s with libdbus's message iterators. Validation happens first, in
/// one pass (`validate`), so a half-written container is never left open on a bad value.
enum DBusMarshalling {
    /// libdbus's limit on container nesting (DBUS_MAXIMUM_TYPE_RECURSION_DEPTH).
    static let maximumDepth = 32

    static func validate(_ value: DBusValue, depth: Int) throws(DBusMarshallingError) {
        guard depth <= maximumDepth else { throw .nestingTooDeep(limit: maximumDepth) }
        switch value {
        case .string(let text):
            if text.utf8.contains(0) { throw .stringContainsNUL }
        case .objectPath(let path):
            try DBusNames.checkObjectPath(path)
        case .signature(let signature):
            guard !signature.utf8.contains(0), signature.withCString({ dbus_signature_validate($0, nil) }) != 0 else {
                throw .invalidSignature(signature)
            }
        case .array(let element, let items):
            try checkSingle(element)
            for item in items {
                guard item.signature == element else { throw .elementTypeMismatch(expected: element, found: item.signature) }
                try validate(item, depth: depth + 1)
            }
        case .dictionary(let key, let valueSignature, let entries):
            guard DBusTypeCode.basicSignatures.contains(key) else { throw .nonBasicDictionaryKey(key) }
            try checkSingle(valueSignature)
            for entry in entries {
                guard entry.key.signature == key else { throw .elementTypeMismatch(expected: key, found: entry.key.signature) }
                guard entry.value.signature == valueSignature else {
                    throw .elementTypeMismatch(expected: valueSignature, found: entry.value.signature)
                }
                try validate(entry.key, depth: depth + 1)
                try validate(entry.value, depth: depth + 1)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidSignature("()") }
            for field in fields { try validate(field, depth: depth + 1) }
        case .variant(let inner):
            try validate(inner, depth: depth + 1)
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double:
            break
        }
    }

    static func checkSingle(_ signature: String) throws(DBusMarshallingError) {
        guard !signature.utf8.contains(0), signature.withCString({ dbus_signature_validate_single($0, nil) }) != 0 else {
            throw .invalidSignature(signature)
        }
    }

    /// Appends a validated value.
    static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) throws(DBusMarshallingError) {
        let written: Bool
        switch value {
        case .byte(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.byte, &v) != 0
        case .boolean(let b):
            var v: dbus_bool_t = b ? 1 : 0
            written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.boolean, &v) != 0
        case .int16(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.int16, &v) != 0
        case .uint16(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.uint16, &v) != 0
        case .int32(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.int32, &v) != 0
        case .uint32(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.uint32, &v) != 0
        case .int64(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.int64, &v) != 0
        case .uint64(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.uint64, &v) != 0
        case .double(var v): written = dbus_message_iter_append_basic(&iterator, DBusTypeCode.double, &v) != 0
        case .string(let text): written = appendString(text, type: DBusTypeCode.string, to: &iterator)
        case .objectPath(let text): written = appendString(text, type: DBusTypeCode.objectPath, to: &iterator)
        case .signature(let text): written = appendString(text, type: DBusTypeCode.signature, to: &iterator)
        case .array(let element, let items):
            try appendContainer(DBusTypeCode.array, signature: element, to: &iterator) { (child) throws(DBusMarshallingError) in
                for item in items { try append(item, to: &child) }
            }
            return
        case .dictionary(let key, let valueSignature, let entries):
            try appendContainer(DBusTypeCode.array, signature: "{\(key)\(valueSignature)}", to: &iterator) { (child) throws(DBusMarshallingError) in
                for entry in entries {
                    try appendContainer(DBusTypeCode.dictionaryEntry, signature: nil, to: &child) { (pair) throws(DBusMarshallingError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
            return
        case .structure(let fields):
            try appendContainer(DBusTypeCode.structure, signature: nil, to: &iterator) { (child) throws(DBusMarshallingError) in
                for field in fields { try append(field, to: &child) }
            }
            return
        case .variant(let inner):
            try appendContainer(DBusTypeCode.variant, signature: inner.signature, to: &iterator) { (child) throws(DBusMarshallingError) in
                try append(inner, to: &child)
            }
            return
        }
        guard written else { throw .outOfMemory }
    }

    private static func appendString(_ text: String, type: Int32, to iterator: inout DBusMessageIter) -> Bool {
        text.withCString { characters in
            var pointer: UnsafePointer<CChar>? = characters
            return dbus_message_iter_append_basic(&iterator, type, &pointer) != 0
        }
    }

    /// Opens a container, fills it, closes it; abandons it if filling fails, so the parent iterator
    /// stays usable for libdbus's cleanup.
    private static func appendContainer(
        _ type: Int32, signature: String?, to iterator: inout DBusMessageIter,
        _ fill: (inout DBusMessageIter) throws(DBusMarshallingError) -> Void
    ) throws(DBusMarshallingError) {
        var child = DBusMessageIter()
        let opened = signature.withOptionalCString { dbus_message_iter_open_container(&iterator, type, $0, &child) }
        guard opened != 0 else { throw .outOfMemory }
        do {
            try fill(&child)
        } catch {
            dbus_message_iter_abandon_container_if_open(&iterator, &child)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator, &child) != 0 else { throw .outOfMemory }
    }

    /// Reads the value under `iterator` (which libdbus has validated on receipt).
    static func read(_ iterator: inout DBusMessageIter) throws(DBusMarshallingError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case DBusTypeCode.byte: return .byte(basic(&iterator, UInt8(0)))
        case DBusTypeCode.boolean: return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case DBusTypeCode.int16: return .int16(basic(&iterator, Int16(0)))
        case DBusTypeCode.uint16: return .uint16(basic(&iterator, UInt16(0)))
        case DBusTypeCode.int32: return .int32(basic(&iterator, Int32(0)))
        case DBusTypeCode.uint32: return .uint32(basic(&iterator, UInt32(0)))
        case DBusTypeCode.int64: return .int64(basic(&iterator, Int64(0)))
        case DBusTypeCode.uint64: return .uint64(basic(&iterator, UInt64(0)))
        case DBusTypeCode.double: return .double(basic(&iterator, Double(0)))
        case DBusTypeCode.string: return .string(string(&iterator))
        case DBusTypeCode.objectPath: return .objectPath(string(&iterator))
        case DBusTypeCode.signature: return .signature(string(&iterator))
        case DBusTypeCode.variant:
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            return .variant(try read(&child))
        case DBusTypeCode.structure:
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            return .structure(try readAll(&child))
        case DBusTypeCode.array:
            let full = currentSignature(&iterator)
            let element = String(full.dropFirst())
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            guard dbus_message_iter_get_element_type(&iterator) == DBusTypeCode.dictionaryEntry else {
                return .array(elementSignature: element, try readAll(&child))
            }
            // element is "{KV}": K is one basic type code, V the rest.
            let inner = element.dropFirst().dropLast()
            let key = String(inner.prefix(1))
            let valueSignature = String(inner.dropFirst())
            var entries: [DBusDictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&child) == DBusTypeCode.dictionaryEntry {
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&child, &pair)
                let entryKey = try read(&pair)
                dbus_message_iter_next(&pair)
                entries.append(DBusDictionaryEntry(key: entryKey, value: try read(&pair)))
                dbus_message_iter_next(&child)
            }
            return .dictionary(keySignature: key, valueSignature: valueSignature, entries)
        default:
            throw .unsupportedType(type)
        }
    }

    private static func readAll(_ iterator: inout DBusMessageIter) throws(DBusMarshallingError) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != DBusTypeCode.invalid {
            values.append(try read(&iterator))
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        dbus_message_iter_get_basic(&iterator, &value)
        return value
    }

    /// Copies the string out: libdbus's pointer lives only as long as the message.
    private static func string(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// The signature of the value under the iterator (libdbus allocates it; freed here).
    private static func currentSignature(_ iterator: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }
}
