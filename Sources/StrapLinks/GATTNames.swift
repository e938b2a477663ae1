// SPDX-License-Identifier: MIT

/// BlueZ's lowercase 128-bit UUID strings for what the link layer looks up.
enum GATTNames {
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"
    static let bodySensorLocation = "00002a38-0000-1000-8000-00805f9b34fb"
    static let batteryService = "0000180f-0000-1000-8000-00805f9b34fb"
    static let batteryLevel = "00002a19-0000-1000-8000-00805f9b34fb"
    static let deviceInformationService = "0000180a-0000-1000-8000-00805f9b34fb"
    static let weightScaleService = "0000181d-0000-1000-8000-00805f9b34fb"
    static let bodyCompositionService = "0000181b-0000-1000-8000-00805f9b34fb"
    static let weightMeasurement = "00002a9d-0000-1000-8000-00805f9b34fb"
    static let bodyCompositionMeasurement = "00002a9c-0000-1000-8000-00805f9b34fb"

    static let device = "org.bluez.Device1"
    static let adapter = "org.bluez.Adapter1"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let bluez = "org.bluez"
}
