// SPDX-License-Identifier: MIT
import ArgumentParser
import GATT

#if canImport(Glibc)
import Glibc
import ScanStreamCommands
#endif

/// `blegate decode <characteristic> <hex>`: decode one payload and print its fields as
/// JSON, or the error on stderr with exit status 1.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one GATT characteristic value and print its fields as JSON.",
        discussion: """
            CHARACTERISTIC is a 16-bit UUID (2a37, 0x2A37), a 128-bit SIG UUID \
            (00002a37-0000-1000-8000-00805f9b34fb) or a name (heart_rate_measurement). \
            HEX may be split over several arguments and may contain spaces or colons: \
            blegate decode 2a37 16 48 10 03 18 03
            """
    )

    @Argument(help: "16-bit UUID, 128-bit UUID or name of the characteristic.")
    var characteristic: String

    @Argument(help: "Payload bytes in hex.")
    var hex: [String] = []

    @Flag(name: .long, help: "Reject a 0x2A37 payload whose RR flag is set without RR values.")
    var strict = false

    @Flag(name: .long, help: "Print compact JSON on one line.")
    var compact = false

    func run() throws {
        guard let c = GATTCharacteristic(identifier: characteristic) else {
            printError("error: unsupported characteristic \(characteristic) (known: "
                + GATTCharacteristic.allCases.map(\.name).joined(separator: ", ") + ")")
            throw ExitCode(1)
        }
        guard let bytes = parseHex(hex.joined(separator: " ")) else {
            printError("error: payload is not an even number of hex digits: \(hex.joined(separator: " "))")
            throw ExitCode(1)
        }
        do {
            let decoded = try GATTDecoder.decode(c, bytes: bytes, heartRateOptions: strict ? .strict : .lenient)
            print(try JSONOutput.text(Decoded(characteristic: c.name, uuid: c.uuidString, fields: decoded), pretty: !compact))
        } catch let error as GATTDecodeError {
            printError("error: \(error.description)")
            throw ExitCode(1)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// What `decode` prints.
    struct Decoded: Encodable {
        var characteristic: String
        var uuid: String
        var fields: DecodedCharacteristic
    }
}
