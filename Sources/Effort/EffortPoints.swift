// SPDX-License-Identifier: MIT

/// Effort points: per minute, the zone number, with zone 5 counting as 4.
///
/// Why this scheme: it rewards time spent working, in proportion to how hard, and a
/// minute in zone 4 earns twice a minute in zone 2, matching the WHO 2020 guidelines'
/// rule that one minute of vigorous activity equals two of moderate. Zone 5 earns no
/// more than zone 4 so that nobody is pushed to stay at their maximum for points (the
/// same cap Myzone's MEPs use). Zone 0 (below 50 %) earns nothing.
public enum EffortPoints {
    public static func perMinute(zone: Int) -> Double {
        Double(min(max(zone, 0), 4))
    }
}
