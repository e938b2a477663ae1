import BlegateTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The path a person takes: the real `blegate` binary, started from a shell.
@Suite("blegate simulate as a command")
struct SimulateCommandTests {
    static var binary: String { BlegateBinary.path }

    @Test("--private-bus prints the address first, serves org.bluez there, and SIGTERM ends it with status 0")
    func privateBus() throws {
        let bin = Self.binary
        try #require(access(bin, X_OK) == 0, "no blegate binary at \(bin)")
        let script = """
        out=$(mktemp); "\(bin)" simulate --private-bus --straps 3 --seed 4 > "$out" 2>&1 & pid=$!
        i=0; while ! grep -q '^ready:' "$out"; do i=$((i+1)); [ $i -gt 300 ] && break; sleep 0.1; done
        echo "first=$(head -n 1 "$out")"
        addr=$(sed -n 's/^DBUS_SYSTEM_BUS_ADDRESS=//p' "$out")
        busctl --address="$addr" tree org.bluez
        grep -c '^device ' "$out" | sed 's/^/devices=/'
        kill -TERM $pid; wait $pid; echo "exit=$?"
        rm -f "$out"
        """
        let output = run("sh -c '\(script.replacingApostrophes())'")
        #expect(output.contains("first=DBUS_SYSTEM_BUS_ADDRESS=unix:path="), "\(output)")
        #expect(output.contains("/org/bluez/hci0"), "\(output)")
        #expect(output.contains("devices=3"), "\(output)")
        #expect(output.contains("exit=0"), "\(output)")
    }

    @Test("A class of 40: --advertising, --advertising-only, --link-limits and --unplug from the command line")
    func gymClass() throws {
        let bin = Self.binary
        try #require(access(bin, X_OK) == 0, "no blegate binary at \(bin)")
        let script = """
        out=$(mktemp); "\(bin)" simulate --private-bus --straps 40 --advertising 10 --advertising-only 4 --adapters 2 \\
            --link-limits 4,7 --unplug 1@60+60 --unplug 0@90 > "$out" 2>&1 & pid=$!
        i=0; while ! grep -q '^ready:' "$out"; do i=$((i+1)); [ $i -gt 300 ] && break; sleep 0.1; done
        addr=$(sed -n 's/^DBUS_SYSTEM_BUS_ADDRESS=//p' "$out")
        grep -c '^device ' "$out" | sed 's/^/devices=/'
        grep -c ' polar-h10 ' "$out" | sed 's/^/h10=/'
        grep -c ' polar-broadcast "Polar H9 ' "$out" | sed 's/^/broadcast=/'
        echo "limits=$(busctl --address="$addr" get-property org.blegate.Simulator /org/blegate/Simulator org.blegate.Simulator1 LinkLimits)"
        echo "counts=$(busctl --address="$addr" call org.blegate.Simulator /org/blegate/Simulator org.blegate.Simulator1 LinkCounts)"
        kill -TERM $pid; wait $pid; echo "exit=$?"
        "\(bin)" simulate --private-bus --straps 4 --advertising 5 --duration 1 > "$out" 2>&1; echo "bad=$? $(grep -m1 Error "$out")"
        rm -f "$out"
        """
        let output = run("sh -c '\(script.replacingApostrophes())'")
        #expect(output.contains("devices=40"), "\(output)")
        #expect(output.contains("h10=6"), "\(output)")
        #expect(output.contains("broadcast=4"), "\(output)")
        #expect(output.contains("limits=au 2 4 7"), "\(output)")
        #expect(output.contains("counts=au 2 0 0"), "\(output)")
        #expect(output.contains("exit=0"), "\(output)")
        #expect(output.contains("bad=64 Error: --advertising 5 must be within 0...4"), "\(output)")
    }
}

extension String {
    /// For embedding in a single-quoted shell argument.
    func replacingApostrophes() -> String {
        var out = ""
        for ch in self { out += ch == "'" ? "'\\''" : String(ch) }
        return out
    }
}
