// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// A named detached pthread with a small stack, for a loop that blocks in poll(2)
/// (Foundation's `Thread` would bring Foundation into the running gateway for this alone).
enum DetachedThread {
    /// Starts `body` on a new thread named `name` (at most 15 bytes); false if none could
    /// be made.
    static func start(name: String, stackSize: Int = 256 * 1024, _ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Body(name: name, run: body))
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        pthread_attr_setstacksize(&attr, stackSize)
        var tid = pthread_t()
        let rc = pthread_create(&tid, &attr, { arg in
            let body = Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue()
            DetachedThread.name(body.name)
            body.run()
            return nil
        }, box.toOpaque())
        pthread_attr_destroy(&attr)
        guard rc == 0 else {
            box.release()
            return false
        }
        pthread_detach(tid)
        return true
    }

    /// Names the calling thread (its `comm`, shown by ps and /proc), as
    /// pthread_setname_np(3) does, which Swift's Glibc module leaves out.
    static func name(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private final class Body {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }
}
