import BlueZ
import Testing

@Suite struct BluetoothUUIDTests {
    @Test func shortFormsBecome128Bit() {
        #expect(BluetoothUUID.normalized("2a37") == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.normalized("2A37") == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.normalized("0x180D") == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.normalized("0000180D") == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.from16(0x2A37) == "00002a37-0000-1000-8000-00805f9b34fb")
    }

    @Test func longFormsAreLowerCased() {
        #expect(BluetoothUUID.normalized("FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8") == "fb005c80-02e7-f387-1cad-8acd2d8df0c8")
        #expect(BluetoothUUID.normalized("fb005c8002e7f3871cad8acd2d8df0c8") == "fb005c80-02e7-f387-1cad-8acd2d8df0c8")
        #expect(BluetoothUUID.normalized("not-a-uuid") == "not-a-uuid")
    }
}
