// SPDX-License-Identifier: MIT

#if canImport(Glibc)
import Glibc
#endif

import Effort

/// Banister's training impulse (TRIMP) in the form of Morton, Fitz-Clarke & Banister
/// (1990), "Modeling human performance in running", J Appl Physiol 69(3):1171–1177:
///
///     TRIMP = minutes × r × k·e^(b·r),  r = (HRavg − HRrest) / (HRmax − HRrest)
///     men: k = 0.64, b = 1.92;  women: k = 0.86, b = 1.67
///
/// The weighting follows the rise of blood lactate with intensity, so a hard minute
/// counts for more than its share of the reserve.
public enum BanisterTRIMP {
    /// The resting heart rate assumed when the member's is unknown: 60 bpm, the usual
    /// adult figure (the 60–100 bpm normal range's lower end suits people who train).
    public static let defaultRestingHR = 60

    /// `r` is clamped to 0…1: an average below rest is no load, one above the maximum
    /// means the maximum is too low, not that the weighting should run on. With `sex`
    /// unknown, the mean of the men's and women's values (neither is favoured; they
    /// differ by under 10 % for r ≤ 0.8).
    public static func value(minutes: Double, averageHR: Double, restingHR: Double, maxHR: Double,
                             sex: MemberProfile.Sex?) -> Double {
        guard maxHR > restingHR, minutes > 0 else { return 0 }
        let r = min(max((averageHR - restingHR) / (maxHR - restingHR), 0), 1)
        func weighted(_ k: Double, _ b: Double) -> Double { minutes * r * k * exp(b * r) }
        switch sex {
        case .male: return weighted(0.64, 1.92)
        case .female: return weighted(0.86, 1.67)
        case nil: return (weighted(0.64, 1.92) + weighted(0.86, 1.67)) / 2
        }
    }
}
