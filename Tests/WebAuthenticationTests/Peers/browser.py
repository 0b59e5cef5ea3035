"""Plays the person's web browser in Keyport's web authentication tests.

Usage: browser.py [--profile DIR] [--action approve|deny|ignore|close] [--log FILE]
                  [--timeout SECONDS] [--ignore-seconds SECONDS] [--incognito] URL

Keyport launches this program as the browser (through $BROWSER or as the session's browser command).
It drives real headless chromium through Selenium, opens URL (the authorization request of
authorization_server.py) and acts like a person:

- approve: on the login form fills alice / wonderland and clicks #login; on the consent page
  (already signed in) clicks #allow;
- deny: clicks #deny, on either page;
- ignore: does nothing more and stays open until SIGTERM/SIGINT (timeout and cancel tests), or
  at most --ignore-seconds (default 120), so an instance nobody terminates does not linger;
- close: exits as soon as the page has loaded (the person closed the browser).

After approve/deny it waits until the authorization server redirects the browser away: to another
http(s) origin (the loopback receiver, e.g. http://127.0.0.1:PORT/callback?...), or to a URL of a
custom scheme (com.example.keyport:/callback?...). Headless chromium does not launch handlers for
custom schemes, so such a redirect is read from chromium's performance log and handed to the
desktop with `xdg-open URL`, as a desktop browser would. A redirect straight from the first page
load (error redirects) is handled the same way, whatever the action.

--profile DIR (alias --user-data-dir=DIR) uses and keeps that chromium user data directory, so
cookies survive between runs; without it chromedriver uses a temporary profile that is removed on
exit. --incognito is passed on to chromium (nothing is kept even in DIR).
--log FILE appends one JSON object per line: {"event": "started", "pid"} (first, before chromium
starts; the test stops a browser it left waiting by signalling that pid), {"event": "loaded", "url"},
{"event": "login_form"},
{"event": "consent_page"}, {"event": "unexpected_page", "url"}, {"event": "callback", "url"},
{"event": "handed_to_xdg_open", "url", "status"}, {"event": "exit", "status"}; each also has
"time" (Unix seconds). When FILE's directory is gone the test that reads it is over: nothing more is
logged, and a browser that cannot log "started" exits at once (status 0).

Exit status: 0 done (or terminated by a signal, after closing chromium cleanly); 1 nothing happened
within --timeout, or the page had nothing to click; 2 bad arguments; 3 xdg-open failed.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
from urllib.parse import urlsplit

# Selenium Manager is never needed (the driver and the browser are given below); make sure that if
# it ever runs it does not phone home.
os.environ.setdefault("SE_AVOID_STATS", "true")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
USERNAME, PASSWORD = "alice", "wonderland"
POLL_SECONDS = 0.05
ANSWER_GRACE_SECONDS = 2

# Schemes a navigation may show that are neither the loopback receiver nor an app's custom scheme.
BROWSER_SCHEMES = {"http", "https", "about", "data", "blob", "javascript", "file", "ws", "wss",
                   "chrome", "chrome-error", "chrome-extension", "chrome-untrusted", "devtools"}


class Browser:
    def __init__(self, args):
        self.args = args
        self.driver = None
        self.stop_requested = False
        self.start_origin = origin(args.url)
        self.sent_elsewhere = None  # a document request to another http(s) origin, once seen

    # --- Logging --------------------------------------------------------------------------------

    def log(self, event, **fields):
        """Appends the event to --log; False when the log's directory is gone."""
        if not self.args.log:
            return True
        record = {"event": event, **fields, "time": round(time.time(), 3)}
        # One write per line in append mode, so concurrent writers do not interleave lines.
        try:
            with open(self.args.log, "a", encoding="utf-8") as file:
                file.write(json.dumps(record) + "\n")
        except FileNotFoundError:
            return False
        return True

    # --- Chromium -------------------------------------------------------------------------------

    def start(self):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-first-run", "--no-default-browser-check",
                         # No keyring here: a fixed cookie encryption key, the same in every run, so a
                         # reused profile can read the cookies an earlier run stored.
                         "--password-store=basic",
                         # Nothing but the test's own requests on the wire.
                         "--disable-background-networking", "--disable-component-update", "--disable-sync"):
            options.add_argument(argument)
        if self.args.profile:
            options.add_argument(f"--user-data-dir={os.path.abspath(self.args.profile)}")
        if self.args.incognito:
            options.add_argument("--incognito")
        # The performance log carries DevTools Network/Page events: the only place a redirect to a
        # custom scheme becomes visible, since headless chromium does not follow it.
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        # Service with an explicit path, else Selenium runs Selenium Manager, which goes to the network.
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        # Selenium's default is 300 s; a load that never finishes must not outlive our own timeout.
        self.driver.set_page_load_timeout(self.args.timeout)

    def quit(self):
        """Close chromium through chromedriver, so it shuts down properly and writes the profile
        (cookies) to disk."""
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception as error:  # chromedriver already gone (e.g. killed with our group)
                print(f"browser.py: quitting chromium: {error}", file=sys.stderr)
            self.driver = None

    # --- The person -----------------------------------------------------------------------------

    def find(self, element_id):
        found = self.driver.find_elements(By.ID, element_id)
        return found[0] if found else None

    def act(self):
        """Looks at the page and does what the action says. False if there is nothing to do it on."""
        login, allow = self.find("login"), self.find("allow")
        if login:
            self.log("login_form")
        elif allow:
            self.log("consent_page")
        else:
            self.log("unexpected_page", url=self.driver.current_url)
            return False

        try:
            if self.args.action == "deny":
                self.find("deny").click()
            elif login:
                self.find("username").send_keys(USERNAME)
                self.find("password").send_keys(PASSWORD)
                login.click()
            else:
                allow.click()
        except TimeoutException:
            pass  # the click started a navigation that has not finished yet: watched below
        return True

    # --- Watching for the redirect --------------------------------------------------------------

    def redirect_target(self):
        """The callback URL if the browser has been sent off the authorization server, else None.

        Reads the performance log (which empties it: every entry is seen once) for
        - Network.requestWillBeSent whose request URL has a custom scheme (chromium reports the
          redirect as a new request with the 302 in redirectResponse, then drops it), or the
          Location header of a redirect response (redirectResponse / responseReceivedExtraInfo);
        - Page.frameRequestedNavigation to a custom scheme (a navigation made by script or link);
        and otherwise checks whether the page is now on another http(s) origin: the navigation to
        the loopback receiver has committed, so the receiver has answered the request. (A document
        request to another origin seen in the log is remembered in sent_elsewhere, for a receiver
        that never answers.)
        """
        try:
            entries = self.driver.get_log("performance")
        except TimeoutException:
            entries = []  # chromedriver waited for a navigation that does not finish; poll again
        for entry in entries:
            try:
                message = json.loads(entry["message"])["message"]
            except (KeyError, ValueError):
                continue
            method, params = message.get("method"), message.get("params", {})
            candidates = []
            if method == "Network.requestWillBeSent":
                candidates.append(params.get("request", {}).get("url"))
                candidates.append(header(params.get("redirectResponse", {}).get("headers"), "location"))
            elif method == "Network.responseReceivedExtraInfo":
                candidates.append(header(params.get("headers"), "location"))
            elif method == "Page.frameRequestedNavigation":
                candidates.append(params.get("url"))
            if method == "Network.requestWillBeSent" and params.get("type") == "Document":
                url = params.get("request", {}).get("url", "")
                if urlsplit(url).scheme in ("http", "https") and origin(url) != self.start_origin:
                    self.sent_elsewhere = url
            for url in candidates:
                if url and is_custom_scheme(url):
                    return url
        try:
            current = self.driver.current_url
        except TimeoutException:
            return None
        if urlsplit(current).scheme in ("http", "https") and origin(current) != self.start_origin:
            return current
        return None

    def wait_for_redirect(self, deadline):
        while time.monotonic() < deadline and not self.stop_requested:
            url = self.redirect_target()
            if url:
                return url
            if self.sent_elsewhere:
                # The request has gone to the other origin; give its answer a moment, then count it
                # as the redirect even if the receiver never answers.
                deadline = min(deadline, time.monotonic() + ANSWER_GRACE_SECONDS)
            time.sleep(POLL_SECONDS)
        if self.sent_elsewhere and not self.stop_requested:
            print(f"browser.py: no answer from {self.sent_elsewhere}", file=sys.stderr)
            return self.sent_elsewhere
        return None

    def hand_to_desktop(self, url):
        """Gives a custom-scheme URL to the scheme's registered handler, like a desktop browser.

        xdg-open inherits our environment (XDG_DATA_HOME, XDG_CONFIG_HOME set by the test), with
        two changes:
        - BROWSER is removed: when no handler is registered, xdg-open falls back to $BROWSER, which
          may be this very program, and would start another browser with the custom URL;
        - xdg-open's generic (no desktop environment) mode consults x-scheme-handler entries only
          when DISPLAY or WAYLAND_DISPLAY is set; a person's desktop always has one, a test
          machine often not, so an unused WAYLAND_DISPLAY name is set if neither is."""
        environment = dict(os.environ)
        environment.pop("BROWSER", None)
        if not environment.get("DISPLAY") and not environment.get("WAYLAND_DISPLAY"):
            environment["WAYLAND_DISPLAY"] = "keyport-test-no-display"
        try:
            status = subprocess.run(["xdg-open", url], env=environment, stdin=subprocess.DEVNULL,
                                    timeout=30).returncode
        except subprocess.TimeoutExpired:
            status = -1
        self.log("handed_to_xdg_open", url=url, status=status)
        return status

    # --- Main -----------------------------------------------------------------------------------

    def run(self):
        self.start()
        if self.stop_requested:
            return 0
        try:
            self.driver.get(self.args.url)
        except TimeoutException:
            pass  # still look at what is there (a redirect may have happened)
        self.log("loaded", url=self.driver.current_url)

        # The server may have redirected already (an error redirect); otherwise act.
        url = self.redirect_target()
        if url is None:
            if self.args.action == "close":
                return 0
            if self.args.action == "ignore":
                # Until a signal, but not forever: a browser started for a shared session is not
                # owned by Keyport, and nothing may terminate it when the test is over.
                give_up = time.monotonic() + self.args.ignore_seconds
                while not self.stop_requested and time.monotonic() < give_up:
                    time.sleep(POLL_SECONDS * 4)
                return 0
            # From here on chromedriver makes each command wait for a pending navigation; keep that
            # wait short so polling goes on when the receiver never answers.
            self.driver.set_page_load_timeout(1)
            if not self.act():
                print(f"browser.py: no login form or consent page at {self.driver.current_url}",
                      file=sys.stderr)
                return 1
            url = self.wait_for_redirect(time.monotonic() + self.args.timeout)
            if self.stop_requested:
                return 0
            if url is None:
                print(f"browser.py: no redirect off {self.start_origin} within {self.args.timeout:g} s "
                      f"(still at {self.driver.current_url})", file=sys.stderr)
                return 1

        self.log("callback", url=url)
        if is_custom_scheme(url):
            status = self.hand_to_desktop(url)
            if status != 0:
                print(f"browser.py: xdg-open {url} failed with status {status}", file=sys.stderr)
                return 3
        return 0


def origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def is_custom_scheme(url):
    scheme = urlsplit(url).scheme.lower()
    return bool(scheme) and scheme not in BROWSER_SCHEMES


def header(headers, name):
    """Case-insensitive header lookup in a DevTools headers object."""
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value
    return None


def main():
    parser = argparse.ArgumentParser(description="Headless chromium that acts like a person.")
    # --user-data-dir and --incognito are accepted too, so this program can stand in where Keyport
    # launches chromium itself (`chromium --user-data-dir=DIR --incognito URL`).
    parser.add_argument("--profile", "--user-data-dir", metavar="DIR", help="chromium user data directory (kept)")
    parser.add_argument("--incognito", action="store_true", help="pass --incognito to chromium")
    parser.add_argument("--action", choices=["approve", "deny", "ignore", "close"], default="approve")
    parser.add_argument("--log", metavar="FILE", help="append JSON lines describing what happened")
    parser.add_argument("--timeout", type=float, default=20, metavar="SECONDS",
                        help="how long to wait for the redirect after acting (default 20)")
    parser.add_argument("--ignore-seconds", type=float, default=120, metavar="SECONDS",
                        help="with --action ignore, quit anyway after this long (default 120)")
    parser.add_argument("url", metavar="URL")
    args = parser.parse_args()
    if urlsplit(args.url).scheme not in ("http", "https"):
        parser.error(f"not an http(s) URL: {args.url}")  # exit 2; never loop through xdg-open

    browser = Browser(args)

    # A signal only sets a flag; every wait polls it. Raising from the handler could interrupt
    # Selenium half-way through starting chromium and leave chromium running.
    def request_stop(*_):
        browser.stop_requested = True
    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    # Logged once a signal is handled, so the test may signal this pid from then on.
    if not browser.log("started", pid=os.getpid()):
        return 0

    status = 1
    try:
        status = browser.run()
    except WebDriverException as error:
        print(f"browser.py: {error.msg or error}", file=sys.stderr)
        status = 1
    finally:
        browser.quit()
        browser.log("exit", status=status)
    return status


if __name__ == "__main__":
    sys.exit(main())
