// SPDX-License-Identifier: MIT
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The JSON object a browser driver script prints last (its progress lines start with '#').
public func lastJSON(_ out: String) throws -> [String: Any] {
    guard let line = out.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw TestSupportError("no JSON answer in: \(out.suffix(3000))")
    }
    return object
}

/// A fresh directory under /tmp for one test's files.
public func scratchDirectory() throws -> String {
    var template = Array("/tmp/blegate-test.XXXXXX".utf8CString)
    guard let d = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
        throw TestSupportError("mkdtemp failed")
    }
    return d
}
