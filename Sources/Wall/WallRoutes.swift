// SPDX-License-Identifier: MIT

/// A request the wall's listener hands to pages served beside it (the coach page): the
/// whole body collected, headers as sent. The wall itself stays read-only.
public struct WallRequest: Sendable {
    public var method: String
    public var path: String
    public var query: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The peer's IP address, for slowing down repeated failed sign-ins.
    public var remoteAddress: String

    public init(method: String, path: String, query: String = "", headers: [(name: String, value: String)] = [],
                body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}

public struct WallResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", headers: [(name: String, value: String)] = [],
                body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", headers: [(name: String, value: String)] = [],
                text: String) {
        self.init(status: status, contentType: contentType, headers: headers, body: Array(text.utf8))
    }
}

/// Pages served on the wall's listener under a path prefix of their own.
public protocol WallRoutes: Sendable {
    /// Whether `path` is this page's (then every method reaches `respond`).
    func handles(_ path: String) -> Bool
    func respond(_ request: WallRequest) async -> WallResponse
}
