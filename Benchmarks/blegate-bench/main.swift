// blegate-bench: prints measured figures; never asserts them (see scripts/bench.sh).
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "decode":
    runDecodeBenchmarks()
case "dbus":
    try await DBusBenchmarks.run(Array(arguments.dropFirst()))
case "dbus-emit":
    try await DBusBenchmarks.emit(Array(arguments.dropFirst()))
default:
    print("""
    usage: blegate-bench decode
           blegate-bench dbus [--rate R[,R...]] [--count N]    (rate 0 = saturation)
    """)
}
