// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The gateway's own threads (the D-Bus dispatcher, the AcquireNotify reader, the cache's
/// writer, the status socket): loops that block in poll(2), epoll or a condition, so they
/// are threads, not tasks on Swift's cooperative pool, each named for `ps` and /proc and
/// with a stack sized for what it runs (a default pthread stack is 8 MiB of address
/// space). Foundation's `Thread` would bring Foundation into the running gateway for this
/// alone.
public enum DetachedThread {
    /// Starts `body` on a new detached thread named `name` (the kernel keeps 15 bytes).
    /// Returns 0, or pthread_create(3)'s error number when no thread could be made.
    @discardableResult
    public static func start(name: String, stackSize: Int = 256 * 1024, _ body: @escaping @Sendable () -> Void) -> Int32 {
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
            return rc
        }
        pthread_detach(tid)
        return 0
    }

    /// Names the calling thread (its `comm`, shown by ps and /proc), as
    /// pthread_setname_np(3) does, which Swift's Glibc module leaves out.
    public static func name(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }
}
