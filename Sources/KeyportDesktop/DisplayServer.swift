/// The person's display server, as the environment names it.
package enum DisplayServer {
    /// Checks that the display server the environment names answers a client of this user: the
    /// Wayland compositor (`WAYLAND_DISPLAY`) answers a round trip, or else the X server
    /// (`DISPLAY`) accepts a connection with the Xauthority cookie. A dialog shown there can be
    /// seen; one shown on a server that does not answer fails, and its failure cannot be told from
    /// the person's "no".
    ///
    /// - Throws: ``DesktopError`` saying why neither answers, or that none is named.
    package static func check(
        _ environment: [String: String],
        within time: Duration = .seconds(10)
    )
        throws(DesktopError)
    {
        var problems: [String] = []
        if let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
            do {
                try WaylandClipboard(display: wayland, environment: environment)
                    .roundTrip(until: .now + time)
                return
            } catch {
                problems.append(error.description)
            }
        }
        if let display = environment["DISPLAY"], !display.isEmpty {
            do {
                _ = try X11Clipboard(display: display, environment: environment, within: time)
                return
            } catch {
                problems.append(error.description)
            }
        }
        guard !problems.isEmpty else {
            throw DesktopError(.noSession, "no graphical session: neither WAYLAND_DISPLAY nor DISPLAY is set")
        }
        throw DesktopError(.unreachable, problems.joined(separator: "; "))
    }
}
