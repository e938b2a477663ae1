// SPDX-License-Identifier: MIT
import PrintableText

/// A class's summary as HTML: one card per strap heard in the class, paired or not, with
/// its curve, time in zones 1 to 5 (m:ss), points and kcal. The wall shows it full screen
/// (paged to fit), the coach page in a scrolling list with each workout's delivery.
///
/// Marked for tests: the container `data-testid="summary"`, each card
/// `data-testid="summary-member"` with `data-strap` (its address), an `svg`, and `data-field`s.
public enum SummaryView {
    public struct Member: Sendable, Equatable {
        public var device: String
        public var name: String
        public var points: Double
        public var kcal: Double?
        /// Below zone 1, then zones 1 to 5.
        public var secondsInZone: [Int]
        /// `HeartRateCurve.svg`.
        public var svg: String
        /// nil: heard too briefly for a workout (`workouts.min_duration`), on the summary all the same.
        public var workoutID: String?

        public init(device: String, name: String, points: Double, kcal: Double?, secondsInZone: [Int], svg: String, workoutID: String? = nil) {
            self.device = device
            self.name = name
            self.points = points
            self.kcal = kcal
            self.secondsInZone = secondsInZone
            self.svg = svg
            self.workoutID = workoutID
        }
    }

    /// Whether a member's workout reached the backend, for the coach page.
    public enum Delivery: String, Sendable {
        case delivered, pending, rejected
        case noBackend = "no-backend"

        var text: String {
            switch self {
            case .delivered: "sent to the backend"
            case .pending: "waiting to be sent"
            case .rejected: "refused by the backend"
            case .noBackend: "kept on the gateway (no backend)"
            }
        }
    }

    /// The cards, most points first. `delivery` by workout id (coach page only).
    public static func html(title: String, members: [Member], delivery: [String: Delivery]? = nil) -> String {
        var b = "<section class=\"summary\" data-testid=\"summary\"><h2 class=\"summary-title\">\(escape(title))</h2>"
        b += "<div class=\"summary-cards\" data-count=\"\(members.count)\">"
        for m in members.sorted(by: { ($0.points, $1.name) > ($1.points, $0.name) }) {
            b += "<article class=\"summary-member\" data-testid=\"summary-member\" data-strap=\"\(escape(m.device))\">"
            b += "<div class=\"sm-name\" data-field=\"name\">\(escape(m.name))</div>"
            b += "<div class=\"sm-pts\"><b data-field=\"points\">\(Int(m.points.rounded()))</b> pts"
            if let kcal = m.kcal { b += " · <b data-field=\"kcal\">\(Int(kcal.rounded()))</b> kcal" }
            b += "</div><div class=\"sm-curve\">\(m.svg)</div><div class=\"sm-zones\">"
            for z in 1...5 {
                let s = z < m.secondsInZone.count ? m.secondsInZone[z] : 0
                b += "<span class=\"z\(z)\" data-field=\"z\(z)\" data-seconds=\"\(s)\"><i>Z\(z)</i>\(SummaryTime.text(seconds: s))</span>"
            }
            b += "</div>"
            if let delivery {
                if let id = m.workoutID {
                    let d = delivery[id] ?? .pending
                    b += "<div class=\"sm-sent\" data-field=\"delivery\" data-delivery=\"\(d.rawValue)\">\(d.text)</div>"
                } else {
                    b += "<div class=\"sm-sent\" data-field=\"delivery\" data-delivery=\"not-kept\">heard too briefly to keep a workout</div>"
                }
            }
            b += "</article>"
        }
        return b + "</div></section>"
    }

    static func escape(_ s: String) -> String { PrintableText.html(s) }
}
