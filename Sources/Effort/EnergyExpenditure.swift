// SPDX-License-Identifier: MIT

/// Energy expenditure from heart rate: Keytel et al. (2005), "Prediction of energy
/// expenditure from heart rate monitoring during submaximal exercise", J Sports Sci
/// 23(3):289-297, the sex-specific equations without VO2max:
///
///     male:   EE = (−55.0969 + 0.6309 HR + 0.1988 W + 0.2017 A) / 4.184
///     female: EE = (−20.4022 + 0.4472 HR − 0.1263 W + 0.074 A) / 4.184
///
/// EE in kcal/min, HR in beats/min, W in kg, A in years (the paper's kJ/min over 4.184).
public enum EnergyExpenditure {
    /// kcal per minute, or nil unless weight, age and sex are all known (the equations
    /// need all three; a default would be a guess shown as a measurement). Never
    /// negative: below about 90 bpm the male equation goes under zero, where the honest
    /// answer is "no exercise expenditure", not a refund.
    public static func kcalPerMinute(hr: Double, profile: MemberProfile) -> Double? {
        guard let w = profile.weightKg, let a = profile.age, let sex = profile.sex else { return nil }
        let age = Double(a)
        let kj: Double
        switch sex {
        case .male: kj = -55.0969 + 0.6309 * hr + 0.1988 * w + 0.2017 * age
        case .female: kj = -20.4022 + 0.4472 * hr - 0.1263 * w + 0.074 * age
        }
        return max(0, kj / 4.184)
    }
}
