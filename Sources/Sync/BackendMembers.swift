// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BackendContract
import PrintableText

/// A member as blegate-server keeps them (`GET /api/v1/members`): display name, profile,
/// and the straps assigned to them there.
public typealias BackendMember = ContractMember

/// A change to a member's profile from the coach page: only the keys set are sent; a
/// key set to nil clears the value at the backend.
public struct MemberProfileChange: Sendable, Equatable, Encodable {
    public var age: Int??
    public var maxHR: Int??
    public var restingHR: Int??
    public var weightKg: Double??

    public init(age: Int?? = .none, maxHR: Int?? = .none, restingHR: Int?? = .none, weightKg: Double?? = .none) {
        self.age = age
        self.maxHR = maxHR
        self.restingHR = restingHR
        self.weightKg = weightKg
    }

    enum CodingKeys: String, CodingKey { case age, maxHR = "max_hr", restingHR = "resting_hr", weightKg = "weight_kg" }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if let age { try c.encode(age, forKey: .age) }
        if let maxHR { try c.encode(maxHR, forKey: .maxHR) }
        if let restingHR { try c.encode(restingHR, forKey: .restingHR) }
        if let weightKg { try c.encode(weightKg, forKey: .weightKg) }
    }
}

extension BackendClient {
    public var membersURL: String { url("/api/v1/members") }
    public var assignmentsURL: String { url("/api/v1/assignments") }

    private struct MembersAnswer: Decodable { var members: [BackendMember] }

    private struct Assignment: Encodable {
        var address: String
        var clientID: String?
        var name: String?
        var model: String?
        enum CodingKeys: String, CodingKey { case address, clientID = "client_id", name, model }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(address, forKey: .address)
            try c.encode(clientID, forKey: .clientID)
            try c.encodeIfPresent(name, forKey: .name)
            try c.encodeIfPresent(model, forKey: .model)
        }
    }

    /// The backend's members, or nil when it keeps none (any backend but blegate-server
    /// answers 404 or 405: the gateway then uses its configuration's `[members]`).
    public func members() async throws(BackendError) -> [BackendMember]? {
        let endpoint = membersURL
        let response = try await exchange(endpoint, body: nil, method: .GET)
        switch response.status {
        case 200..<300:
            guard let answer = try? JSONDecoder().decode(MembersAnswer.self, from: Data(response.body)) else {
                throw BackendError(kind: .invalidResponse, endpoint: endpoint, status: response.status,
                                   message: "backend answered \(endpoint) with \(response.status) but not {members: [...]}; the backend does not follow the blegate contract")
            }
            return answer.members.filter { PrintableText.isClean($0.clientID, limit: Self.clientIDLimit) }
        case 404, 405:
            return nil
        default:
            throw failure(response, endpoint: endpoint)
        }
    }

    /// Saves a member's profile at the backend; returns the member as stored.
    public func updateMember(clientID: String, _ change: MemberProfileChange) async throws(BackendError) -> BackendMember {
        let endpoint = membersURL + "/" + Self.pathSegment(clientID)
        let response = try await exchange(endpoint, body: Wire.encode(change), method: .PUT)
        guard (200..<300).contains(response.status) else {
            if response.status == 404 {
                throw BackendError(kind: .notFound, endpoint: endpoint, status: 404,
                                   message: "the backend has no member \(PrintableText.clean(clientID, limit: 80)); add them on the staff page first")
            }
            throw failure(response, endpoint: endpoint)
        }
        guard let member = try? JSONDecoder().decode(BackendMember.self, from: Data(response.body)) else {
            throw BackendError(kind: .invalidResponse, endpoint: endpoint, status: response.status,
                               message: "backend answered \(endpoint) with \(response.status) but not a member")
        }
        return member
    }

    /// Tells the backend who wears a strap from now on (nil: nobody), so every room and
    /// the records sent without a client id agree.
    public func assign(address: String, clientID: String?, name: String?, model: String?) async throws(BackendError) {
        let endpoint = assignmentsURL
        let body = Wire.encode(Assignment(address: address.uppercased(), clientID: clientID, name: name, model: model))
        let response = try await exchange(endpoint, body: body)
        guard (200..<300).contains(response.status) else {
            if response.status == 404 {
                throw BackendError(kind: .notFound, endpoint: endpoint, status: 404,
                                   message: "the backend does not know member \(PrintableText.clean(clientID ?? "", limit: 80)) (or keeps no members)")
            }
            throw failure(response, endpoint: endpoint)
        }
    }

    /// A client id as one path segment.
    static func pathSegment(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            let c = Character(Unicode.Scalar(b))
            if c.isASCII && (c.isLetter || c.isNumber || "-._~".contains(c)) { out.append(c) }
            else { out += "%" + (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true) }
        }
        return out
    }
}
