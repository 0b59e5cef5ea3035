// `keyport-browser`, the native messaging host of Keyport's browser extension (browser/): the
// browser starts it for each port the extension opens, with the extension's origin (Chromium) or
// its manifest's path and id (Firefox) as arguments, and talks to it on standard input and
// output. KeyportBrowser.BrowserHost does the work.
import KeyportBrowser
import KeyportSystemCore

BrowserHost(environment: ProcessEnvironment.current).run()
