#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Threads for the host's blocking calls, without Foundation (which the host does not load, to
/// start in milliseconds).
enum Threads {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread,
            nil,
            { context in
                Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            },
            context
        )
        guard created == 0 else {
            // No thread: run it here rather than lose the call.
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return
        }
        pthread_detach(thread)
    }
}
