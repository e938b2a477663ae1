/// A change to the mirror, delivered in the order bluetoothd reported it.
///
/// Changed-property sets use BlueZ's names ("RSSI", "Connected", "ServicesResolved",
/// "Percentage" for Battery1), and name only values that really changed.
public enum BlueZEvent: Sendable, Hashable {
    case adapterAdded(Adapter)
    case adapterRemoved(Adapter)
    case adapterChanged(Adapter, changed: Set<String>)
    case deviceAdded(Device)
    case deviceRemoved(Device)
    case deviceChanged(Device, changed: Set<String>)
    case gattObjectAdded(GattObject)
    case gattObjectRemoved(GattObject)
    case gattObjectChanged(GattObject, changed: Set<String>)
    /// bluetoothd left the bus: the mirror is empty, every connection and notify
    /// session it held is gone. No per-object removal events precede this.
    case bluezVanished
    /// A bluetoothd (the first, or a restarted one) is mirrored: its objects have
    /// been announced with added events just before. Clients resume devices here.
    case bluezAppeared
}
