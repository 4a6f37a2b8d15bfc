public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file operation that failed; `path` names the file, `reason` the cause (strerror text).
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
    public var description: String { "\(path): \(reason)" }
}

/// Crash-safe whole-file writes: write a temp file in the same directory, fsync it, rename it
/// over the target, fsync the directory (POSIX rename(2) is atomic within one file system).
/// After a crash the file holds either the old or the new bytes, never a mix.
public enum AtomicFile {
    /// Replaces the file at `path` with `data` atomically and durably.
    /// - Throws: `FileError` naming the path and the failing call; the old file is untouched.
    public static func write(_ data: Data, to path: String) throws(FileError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temp = "\(path).tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(temp, "open") }
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
        guard written else {
            let error = failure(temp, "write")
            close(fd)
            throw error
        }
        guard fsync(fd) == 0 else {
            let error = failure(temp, "fsync")
            close(fd)
            throw error
        }
        close(fd)
        guard rename(temp, path) == 0 else { throw failure(path, "rename") }
        ok = true
        let dirFd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFd >= 0 {
            _ = fsync(dirFd)
            close(dirFd)
        }
    }

    /// Creates `path` (and parents) with mode 0700 if missing.
    /// - Throws: `FileError` when it cannot be created or is not a writable directory.
    public static func ensureDirectory(_ path: String) throws(FileError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw FileError(path: path, reason: "exists and is not a directory") }
        } else {
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw FileError(path: path, reason: "cannot create directory (\(error.localizedDescription))")
            }
        }
        guard access(path, W_OK | X_OK) == 0 else { throw failure(path, "access") }
    }

    private static func failure(_ path: String, _ call: String) -> FileError {
        FileError(path: path, reason: "\(call) failed: \(String(cString: strerror(errno)))")
    }
}

/// A JSON state file of one Codable value, written with `AtomicFile`.
public struct StateFile<Value: Codable & Sendable>: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The stored value, or nil when the file does not exist yet.
    /// - Throws: `FileError` when it exists but cannot be read or is not a valid state file
    ///   (the file is left in place, never overwritten).
    public func load() throws(FileError) -> Value? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileError(path: path, reason: "cannot be read")
        }
        do {
            return try Self.decoder.decode(Value.self, from: data)
        } catch {
            throw FileError(path: path, reason: "not a valid state file (\(Self.describe(error)))")
        }
    }

    /// Writes `value` atomically and durably.
    public func save(_ value: Value) throws(FileError) {
        let data: Data
        do {
            data = try Self.encoder.encode(value)
        } catch {
            throw FileError(path: path, reason: "cannot encode state (\(error))")
        }
        try AtomicFile.write(data, to: path)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            return context.debugDescription
        case DecodingError.keyNotFound(let key, _):
            return "missing key \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "\(path): \(context.debugDescription)"
        default:
            return String(describing: error)
        }
    }
}
