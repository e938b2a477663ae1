// SPDX-License-Identifier: MIT
import StrapLinks
import WearMetrics

/// Hands every record to the next sink, then tells the class keeper a member was heard
/// (open gym follows members by their heart rate).
final class ClassRecordSink: RecordSink {
    let next: any RecordSink
    let classes: ClassKeeper

    init(_ next: any RecordSink, classes: ClassKeeper) {
        self.next = next
        self.classes = classes
    }

    func receive(_ record: WearMetrics, kind: RecordKind) {
        next.receive(record, kind: kind)
        if kind == .heartRate { classes.heard(record) }
    }

    func receive(_ batch: [SinkRecord]) {
        next.receive(batch)
        classes.heard(batch.lazy.filter { $0.kind == .heartRate }.map(\.record))
    }
}
