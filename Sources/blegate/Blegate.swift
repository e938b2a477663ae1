import ArgumentParser
import Gateway
import LinkCommands

@main
struct Blegate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blegate",
        abstract: "A BLE heart-rate gateway for BlueZ on Linux.",
        subcommands: [SimulateCommand.self, ScanCommand.self, StreamCommand.self, DecodeCommand.self, HRVCommand.self,
                      CacheCommand.self, DevicesCommand.self, DoctorCommand.self,
                      RunCommand.self, StatusCommand.self, PairCommand.self]
    )

    static func main() async {
        StreamHandover.execIfLinkCommand()
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
