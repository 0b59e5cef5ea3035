// `keyport-browser`, the native messaging host of Keyport's browser extension (browser/): the
// browser starts it for each port the extension opens, with the extension's origin (Chromium) or
// its manifest's path and id (Firefox) as arguments, and talks to it on standard input and
// output. KeyportBrowser.BrowserHost does the work.
import KeyportBrowser
import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// A person who runs it by hand is told what it is; the browser never starts it on a terminal.
if isatty(0) == 1 || CommandLine.arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
    let usage = """
        keyport-browser is the native messaging host of Keyport's browser extension: the browser starts
        it and talks to it on standard input and output. Run `keyport browser install` to let the
        extension reach it (docs/protocol.md, "The browser extension and its native messaging host").

        """
    _ = usage.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    exit(isatty(0) == 1 ? 2 : 0)
}
BrowserHost(environment: ProcessEnvironment.current).run()
