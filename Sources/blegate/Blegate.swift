import ArgumentParser
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
        await CommandEntry.run(Blegate.self)
    }
}
