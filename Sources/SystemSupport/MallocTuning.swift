// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Keeps a long-running gateway's heap from creeping.
///
/// glibc gives every thread that allocates its own malloc arena, up to eight per core.
/// The gateway has many short-lived allocations spread over the cooperative pool, the
/// D-Bus dispatcher, SQLite's and the HTTP client's threads; measured with 50 straps,
/// the freed memory sat in five arenas that glibc never shrinks from the middle, and the
/// resident size crept for as long as it ran. Two arenas are plenty on a Pi's few cores,
/// and a periodic `malloc_trim` hands whole free pages back from every arena.
public enum MallocTuning {
    /// Caps the number of malloc arenas. Call it first thing: threads that already
    /// allocated keep their arena. `MALLOC_ARENA_MAX` in the environment wins.
    public static func limitArenas(_ count: Int32 = 2) {
        #if canImport(Glibc)
        guard getenv("MALLOC_ARENA_MAX") == nil, let mallopt = glibc.mallopt else { return }
        _ = mallopt(mArenaMax, count)
        #endif
    }

    /// Returns free pages of every arena to the kernel. A few hundred microseconds with
    /// a heap of tens of MiB; worth doing about once a minute, not per record.
    public static func trim() {
        #if canImport(Glibc)
        _ = glibc.mallocTrim?(0)
        #endif
    }

    #if canImport(Glibc)
    /// `M_ARENA_MAX` of <malloc.h>, which Swift's Glibc module does not carry.
    private static let mArenaMax: Int32 = -8

    /// <malloc.h>'s functions, looked up once; nil where the C library has none (musl).
    private struct Functions: @unchecked Sendable {
        let mallopt: (@convention(c) (Int32, Int32) -> Int32)?
        let mallocTrim: (@convention(c) (Int) -> Int32)?
    }

    private static let glibc: Functions = {
        let handle = dlopen(nil, RTLD_NOW)
        func find<F>(_ name: String, as: F.Type) -> F? {
            guard let symbol = dlsym(handle, name) else { return nil }
            return unsafeBitCast(symbol, to: F.self)
        }
        return Functions(mallopt: find("mallopt", as: (@convention(c) (Int32, Int32) -> Int32).self),
                         mallocTrim: find("malloc_trim", as: (@convention(c) (Int) -> Int32).self))
    }()
    #endif
}
