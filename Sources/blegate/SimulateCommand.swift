import ArgumentParser

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "simulate", abstract: "Serve a simulated BlueZ (org.bluez) with virtual straps.")
    func run() async throws {}
}
