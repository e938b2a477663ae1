// SPDX-License-Identifier: MIT
import Prometheus

extension MetricNameDescriptor {
    /// A metric by its whole name (`blegate_outbox_pending_records`), as docs/metrics.md
    /// lists it: the tables, the rules and the code then spell each name the same way.
    public static func named(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
