// blegate-bench: prints measured figures; never asserts them (see scripts/bench.sh).
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "decode":
    runDecodeBenchmarks()
case "json-encode":
    runJSONEncodeBenchmarks(Array(arguments.dropFirst()))
case "contract-parse":
    runContractParseBenchmarks(Array(arguments.dropFirst()))
case "dbus":
    try await DBusBenchmarks.run(Array(arguments.dropFirst()))
case "simulator":
    try await SimulatorBenchmarks.run(Array(arguments.dropFirst()))
case "simulator-serve":
    try await SimulatorBenchmarks.serve(Array(arguments.dropFirst()))
case "cache":
    try await CacheBenchmarks.run(Array(arguments.dropFirst()))
case "cache-backlog":
    try await CacheBenchmarks.backlog(Array(arguments.dropFirst()))
case "sync":
    try await SyncBenchmarks.run(Array(arguments.dropFirst()))
case "catchup":
    try await RunBenchmarks.catchup(Array(arguments.dropFirst()))
case "latency":
    try await RunBenchmarks.latency(Array(arguments.dropFirst()))
case "stream":
    do {
        try await StreamBenchmarks.run(Array(arguments.dropFirst()))
    } catch {
        report("blegate-bench stream: \(error)")
        exit(1)
    }
case "powercut-writer":
    try await PowerCut.writer(Array(arguments.dropFirst()))
case "powercut-check":
    try await PowerCut.check(Array(arguments.dropFirst()))
case "dbus-emit":
    try await DBusBenchmarks.emit(Array(arguments.dropFirst()))
default:
    print("""
    usage: blegate-bench decode
           blegate-bench json-encode [ITERATIONS]   (appendJSON against JSONEncoder, one heart-rate record)
           blegate-bench contract-parse [BATCHES]   (blegate-server's parse and checks of a 200-record batch, µs/record)
           blegate-bench dbus [--rate R[,R...]] [--count N] [--c-reference PATH]   (rate 0 = saturation)
           blegate-bench simulator [--straps N] [--rate HZ[,HZ...]] [--seconds S]
           blegate-bench cache [--records N] [--rate R] [--seconds S]
           blegate-bench cache-backlog --path FILE [--devices 60] [--seconds 3600] [--key-file FILE]
           blegate-bench sync [--records N] [--batch B[,B...]] [--sink wearmetrics|samples]
           blegate-bench catchup [--devices 60] [--seconds 3600] [--batch B[,B...]]
           blegate-bench latency [--straps 10] [--rate HZ] [--seconds 60] [--commit-interval MS]
           blegate-bench powercut-writer --path DB --log FILE [--interval-ms 50]   (scripts/powercut-vm.sh)
           blegate-bench powercut-check --path DB --log FILE
           blegate-bench stream --blegate PATH [--total 500,50] [--straps 10] [--clients acquire,start,bleak,run] [--python VENV/bin/python] [--seconds 20]
    """)
}
