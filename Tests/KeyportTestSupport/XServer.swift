import Foundation

/// A real X server (Xvfb) of one test's own, on a display it chose itself (`-displayfd`), that
/// takes only clients holding its cookie: the tests that show dialogs or type into windows use it,
/// since Keyport checks that a display answers before it asks anyone there. Stopped by ``stop()``,
/// or killed with its `Program` when released.
package struct XServer: Sendable {
    /// `:N`.
    package let display: String
    /// The Xauthority file with the server's cookie (a wildcard entry, which libXau matches for
    /// any display).
    package let authority: String
    private let server: Program

    /// Starts Xvfb, keeping its cookie in `directory`.
    package init(cookieIn directory: URL) async throws {
        let xvfb = try Peers.require("/usr/bin/Xvfb", "xvfb")
        let cookie = directory.appendingPathComponent("Xauthority")
        let secret = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let name = Array("MIT-MAGIC-COOKIE-1".utf8)
        let entry: [UInt8] = [0xFF, 0xFF, 0, 0, 0, 0, 0, UInt8(name.count)] + name + [0, UInt8(secret.count)] + secret
        try Data(entry).write(to: cookie)
        server = try Program(
            xvfb,
            ["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-auth", cookie.path]
        )
        display = ":" + (try await server.waitForLine(timeout: .seconds(30)) { Int($0) != nil })
        authority = cookie.path
    }

    /// `environment` on this display: `DISPLAY` and `XAUTHORITY` set, no Wayland compositor.
    package func environment(_ environment: [String: String]) -> [String: String] {
        var environment = environment
        environment["DISPLAY"] = display
        environment["XAUTHORITY"] = authority
        environment["WAYLAND_DISPLAY"] = nil
        return environment
    }

    package func stop() { server.stop() }
}
