import ArgumentParser
import ScanStreamCommands

struct Blegate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blegate",
        abstract: "A BLE heart-rate gateway for BlueZ on Linux.",
        subcommands: [SimulateCommand.self, ScanCommand.self, StreamCommand.self, DecodeCommand.self, HRVCommand.self,
                      CacheCommand.self, DevicesCommand.self, DoctorCommand.self,
                      RunCommand.self, StatusCommand.self, PairCommand.self, ClassCommand.self,
                      WorkoutsCommand.self, ExportCommand.self]
    )
}

@main
enum BlegateMain {
    static func main() {
        StreamHandover.execIfLinkCommand()
        CommandEntry.main(Blegate.self)
    }
}
