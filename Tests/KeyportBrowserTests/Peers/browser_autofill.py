"""Plays the person at a real browser with Keyport's extension, for Keyport's browser AutoFill tests.

Usage: browser_autofill.py --browser chromium|firefox --keyport PATH --extension DIR --work DIR
                           [--bench N]

keyportd, Keyport Vault (unlocked, enabled as a provider, its passphrase "open sesame") and the
extension's native messaging host manifest (keyport browser install) must be ready in the
environment this program gets. It adds the vault's items for its own sites, serves them on real
host names over https (a test CA of its own, imported into the browser's NSS database) and http,
drives the browser as a person would (trusted clicks at the menu's place) and prints one JSON
object: each scenario's outcome — the values of the fields afterwards, whether the menu came, and
(Chromium) what the extension said in the page's console. It asserts nothing: the Swift test does.

Agents: it starts `keyport agent --auto …` itself where a scenario needs the person (accept,
decline) and stops it after.

--bench N: only measures, N fills in a warm browser: the milliseconds from the click to the filled
field, as the content script reports them in the page (Chromium), and the first (cold) one.
"""
import argparse
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

os.environ.setdefault("SE_AVOID_STATS", "true")

PASSPHRASE = "open sesame"
SECRET = "JBSWY3DPEHPK3PXP"
STEADY = 0.8  # seconds: longer than the menu must have been steady (500 ms) before a click counts

# --- The sites ------------------------------------------------------------------------------------

LOGIN = """<!doctype html><html><head><title>login</title>{head}</head><body>
<form id="form" action="{action}" method="post">
<input id="user" name="username" autocomplete="username">
<input id="pass" type="password" name="password" autocomplete="current-password">
{extra}
<button id="go">Sign in</button>
</form>{after}</body></html>"""

OTP_MARKED = """<!doctype html><html><body><form action="/done" method="post">
<input id="code" name="c" autocomplete="one-time-code"><button>Verify</button></form></body></html>"""

OTP_NAMED = """<!doctype html><html><body><form action="/done" method="post">
<label for="code">Authentication code</label>
<input id="code" name="mfa" inputmode="numeric" maxlength="6"><button>Verify</button></form></body></html>"""

OTP_BOXES = """<!doctype html><html><body><form action="/done" method="post"><div id="boxes">
""" + "".join(f'<input id="b{i}" maxlength="1" inputmode="numeric" size="1">' for i in range(6)) + """
</div><button>Verify</button></form></body></html>"""

DONE = """<!doctype html><html><body><p id="done">Signed in.</p></body></html>"""

# What an attacking page does once the menu's host (a new child of <html>) appears; stopAttack()
# undoes it, so the same click can be shown to work afterwards.
ATTACK = """<script>
const attack = {kind: %s};
let undo = () => {};
const seen = new WeakSet();
if (attack.kind === "pseudo-cover") {
  // A picture the page draws from inside whatever element it can reach at the menu's place: the
  // pseudo-elements of every element of <html>'s, and of any popover, over the whole of it.
  const style = document.createElement("style");
  style.textContent = `html > *::before, html > *::after, :popover-open::before, :popover-open::after {
    content: "Continue"; position: absolute; inset: 0; background: rgb(255, 0, 255); pointer-events: none; z-index: 2147483647; }`;
  document.head.append(style);
  undo = () => style.remove();
}
new MutationObserver(() => {
  const host = [...document.documentElement.children].find(e => e.tagName === "DIV");
  if (!host || seen.has(host)) return;
  seen.add(host);
  const box = host.getBoundingClientRect();
  switch (attack.kind) {
    case "host-opacity": host.style.setProperty("opacity", "0", "important"); undo = () => host.style.setProperty("opacity", "1", "important"); break;
    case "host-clip": host.style.setProperty("clip-path", "inset(0 0 90%% 0)", "important"); undo = () => host.style.setProperty("clip-path", "none", "important"); break;
    case "html-opacity": document.documentElement.style.opacity = "0.02"; undo = () => document.documentElement.style.opacity = ""; break;
    case "html-transform": document.documentElement.style.transform = "scale(1.001)"; undo = () => document.documentElement.style.transform = ""; break;
    case "html-scale": document.documentElement.style.scale = "1.001"; undo = () => document.documentElement.style.scale = ""; break;
    case "host-zoom": host.style.zoom = "0.3"; break;
    case "host-moved": document.documentElement.append(host); break;
    case "blocked-cover": {
      // A picture drawn from the menu's host, kept out of sight, that the compositor slides in
      // over the menu while the page's main thread is blocked, and that is put back before the page
      // yields: no check on the page's frames, nor IntersectionObserver v2, sees it.
      const style = document.createElement("style");
      style.textContent = `html > div::before { content: "Continue"; position: absolute; inset: 0; background: rgb(255, 0, 255);
          pointer-events: none; z-index: 2147483647; transform: translateX(-4000px); }
        html.slide > div::before { animation: slide 0.2s 0.1s both; }
        @keyframes slide { from { transform: translateX(-4000px); } to { transform: none; } }`;
      document.head.append(style);
      window.startBlock = () => requestAnimationFrame(() => {
        document.documentElement.classList.add("slide");
        setTimeout(() => {
          window.blocked = [Date.now()];
          const end = Date.now() + 3000;
          while (Date.now() < end) {}
          document.documentElement.classList.remove("slide");
          window.blocked.push(Date.now());
        }, 0);
      });
      break;
    }
    case "popover": case "dialog": {
      const cover = document.createElement(attack.kind === "dialog" ? "dialog" : "div");
      cover.textContent = "Click to win a prize!";
      cover.style.cssText = `position:fixed;margin:0;left:${box.left}px;top:${box.top}px;width:${box.width}px;height:${box.height}px;pointer-events:none;background:gold;border:0`;
      document.body.append(cover);
      if (attack.kind === "dialog") cover.showModal(); else { cover.popover = "manual"; cover.showPopover(); }
      undo = () => cover.remove();
      break;
    }
    case "cover-div": {
      const cover = document.createElement("div");
      cover.style.cssText = `position:fixed;left:${box.left}px;top:${box.top}px;width:${box.width}px;height:${box.height}px;z-index:2147483647;pointer-events:none;background:gold`;
      document.body.append(cover);
      undo = () => cover.remove();
      break;
    }
  }
}).observe(document.documentElement, {childList: true});
window.stopAttack = () => undo();
</script>"""

# Events a page can make itself, on load, at the menu and at the fields: none is a person's.
SYNTHETIC = """<script>
window.addEventListener("load", () => {
  const user = document.getElementById("user");
  user.focus();
  setTimeout(() => {
    for (const target of [...document.documentElement.children, user, document.getElementById("pass")]) {
      for (const type of ["pointerdown", "mousedown", "pointerup", "mouseup", "click"]) {
        const r = target.getBoundingClientRect();
        target.dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: r.left + 40, clientY: r.top + 60}));
      }
      target.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
    }
  }, 1200);
});
</script>"""

# Every element but the user name field out of the Tab order: the next Tab stop after it is the
# menu, and "type your name, Tab, Enter" would choose in it.
TAB_TRAP = """<script>
window.addEventListener("load", () => {
  for (const element of document.querySelectorAll("input, button, a, [tabindex]")) {
    if (element.id !== "user") element.tabIndex = -1;
  }
});
</script>"""

HIDDEN_DECOYS = """<input id="decoy-offscreen" type="password" style="position:absolute;left:-9999px">
<input id="decoy-transparent" name="email" style="opacity:0">"""

FRAMED = """<!doctype html><html><body>
<iframe id="child" src="https://evil.test:{port}/login" style="width:500px;height:200px"></iframe>
<form id="form" action="/done" method="post">
<input id="user" autocomplete="username"><input id="pass" type="password" autocomplete="current-password">
</form></body></html>"""

# A page of another site that frames the real sign-in page and lays a picture over it that lets
# clicks through: only IntersectionObserver v2, in the menu's own frame, can see it.
FRAME_COVER = """<!doctype html><html><body style="margin:0">
<iframe id="child" src="https://site.test:{port}/login" style="position:absolute;left:0;top:0;width:600px;height:400px;border:0"></iframe>
<div style="position:absolute;left:0;top:0;width:600px;height:400px;background:#fffe;pointer-events:none">Free prize</div>
</body></html>"""


# The site's own page of user content, sandboxed (an opaque origin): not the site.
SANDBOXED = """<!doctype html><html><body>
<iframe id="child" sandbox="allow-scripts allow-forms" src="https://site.test:{port}/login" style="width:500px;height:200px"></iframe>
</body></html>"""


def page_for(host, path, https_port):
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    route = urllib.parse.urlsplit(path).path
    attack = query.get("attack", [None])[0]
    if route == "/login":
        head = ATTACK % json.dumps(attack) if attack else ""
        after = (SYNTHETIC if "synthetic" in query else "") + (TAB_TRAP if "tabtrap" in query else "")
        extra = HIDDEN_DECOYS if "decoys" in query else ""
        action = "/done?slow=1" if "slow" in query else "/done"
        return LOGIN.format(head=head, extra=extra, after=after, action=action)
    if route == "/otp":
        return OTP_MARKED
    if route == "/otp-named":
        return OTP_NAMED
    if route == "/otp-boxes":
        return OTP_BOXES
    if route == "/framed":
        return FRAMED.format(port=https_port)
    if route == "/sandboxed":
        return SANDBOXED.format(port=https_port)
    if route == "/frame-cover":
        return FRAME_COVER.format(port=https_port)
    if route == "/done":
        return DONE
    return None


def serve(certificate=None):
    """A server on a free loopback port, https when given a certificate; returns the port."""
    state = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def respond(self):
            body = page_for(self.headers.get("Host", ""), self.path, state.get("https", 0))
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.respond()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if "slow=1" in self.path:
                # A sign-in that takes its time: the page that sent it stays up meanwhile.
                time.sleep(2.5)
            self.respond()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if certificate:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*certificate)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1], state


def make_ca(work):
    """A test CA and a certificate for the test sites, with openssl."""
    ca_key, ca, key, csr, cert = (os.path.join(work, name) for name in ("ca.key", "ca.pem", "site.key", "site.csr", "site.pem"))
    run = lambda *args: subprocess.run(args, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=Keyport test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=site.test")
    extensions = os.path.join(work, "site.ext")
    with open(extensions, "w") as file:
        file.write("subjectAltName=DNS:site.test,DNS:*.site.test,DNS:evil.test,DNS:plain.test\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2",
        "-extfile", extensions)
    return ca, (cert, key)


def trust(ca, database):
    os.makedirs(database, exist_ok=True)
    if not os.path.exists(os.path.join(database, "cert9.db")):
        subprocess.run(["certutil", "-d", "sql:" + database, "-N", "--empty-password"], check=True, capture_output=True)
    subprocess.run(["certutil", "-d", "sql:" + database, "-A", "-t", "C,,", "-n", "Keyport test CA", "-i", ca],
                   check=True, capture_output=True)


def png_pixels(data):
    """The width, height and rows of RGB(A) pixels of an 8-bit PNG (what the browsers' screenshots are)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    depth, color = header[8], header[9]
    assert depth == 8 and color in (2, 6), (depth, color)
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous, offset = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def magenta_in(data, rect):
    """How many pixels inside `rect` (inset by 4) of a screenshot are the attacks' magenta."""
    width, height, channels, rows = png_pixels(data)
    count = 0
    for y in range(int(rect["y"]) + 4, min(height, int(rect["y"] + rect["height"]) - 4), 3):
        for x in range(int(rect["x"]) + 4, min(width, int(rect["x"] + rect["width"]) - 4), 3):
            r, g, b = rows[y][x * channels:x * channels + 3]
            if r > 200 and g < 60 and b > 200:
                count += 1
    return count


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- The browsers ---------------------------------------------------------------------------------

# The menu's host, as the page sees it: the last child of <html> that the content script added (a
# div with the menu's place and size).
MENU_HOST = """return [...document.documentElement.children].filter(e => e.tagName === "DIV" && Math.abs(e.getBoundingClientRect().width - 340) < 2).pop() || null;"""

TAB, ENTER, DOWN = "\ue004", "\ue007", "\ue015"

class Chromium:
    name = "chromium"

    def __init__(self, args, ca):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        home = os.environ["HOME"]
        trust(ca, os.path.join(home, ".pki", "nssdb"))
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        # A fresh profile (Chromium keeps an extension's service worker from one run to the next),
        # with the host manifest `keyport browser install` wrote for the person's.
        config = os.environ.get("XDG_CONFIG_HOME", os.path.join(home, ".config"))
        profile = tempfile.mkdtemp(dir=args.work, prefix="chromium-")
        shutil.copytree(os.path.join(config, "chromium", "NativeMessagingHosts"), os.path.join(profile, "NativeMessagingHosts"))
        for argument in ("--headless=new", f"--user-data-dir={profile}", f"--load-extension={args.extension}",
                         "--host-resolver-rules=MAP *.test 127.0.0.1", "--no-sandbox", "--disable-gpu",
                         "--window-size=1000,800", "--no-first-run"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver", env=dict(os.environ)))
        self.console = []

    def open(self, url):
        self.driver.get(url)

    def run(self, script):
        return self.driver.execute_script(script)

    def click_at(self, x, y, pause=0):
        """A person's click: the pointer moves onto the place (and rests `pause` seconds), then presses."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        actions = ActionBuilder(self.driver)
        actions.pointer_action.move_to_location(int(x) + 3, int(y) + 2)
        if pause:
            actions.pointer_action.pause(pause)
        actions.pointer_action.move_to_location(int(x), int(y)).click()
        actions.perform()

    def point_at(self, x, y):
        """The pointer moves onto the place, and stays there."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        actions = ActionBuilder(self.driver)
        actions.pointer_action.move_to_location(int(x), int(y))
        actions.perform()

    def press_here(self):
        """A press and release where the pointer is, without moving it."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        actions = ActionBuilder(self.driver)
        actions.pointer_action.pointer_down().pointer_up()
        actions.perform()

    def click(self, element_id):
        self.driver.find_element("id", element_id).click()

    def type(self, element_id, text):
        self.driver.find_element("id", element_id).send_keys(text)

    def key(self, key):
        """A person's key (WebDriver's code for it), to whatever has the focus."""
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(self.driver).send_keys(key).perform()

    def screenshot(self):
        return self.driver.get_screenshot_as_png()

    def fetch(self, url):
        """Whether a script of the page's can fetch `url`."""
        return self.driver.execute_async_script("""const done = arguments[arguments.length - 1];
            fetch(arguments[0]).then(() => done(true), () => done(false));""", url)

    def in_menu(self, script):
        """Runs `script` in the menu's own page (the frame in the host's closed shadow root)."""
        host = self.driver.execute_script(MENU_HOST)
        frame = host.shadow_root.find_element("css selector", "iframe")
        self.driver.switch_to.frame(frame)
        try:
            return self.driver.execute_script(script)
        finally:
            self.driver.switch_to.default_content()

    def frame(self, element_id):
        self.driver.switch_to.frame(self.driver.find_element("id", element_id))

    def top(self):
        self.driver.switch_to.default_content()

    def logs(self):
        self.console += [entry["message"] for entry in self.driver.get_log("browser") if "keyport:" in entry["message"]]
        return self.console

    def quit(self):
        self.driver.quit()


class Firefox:
    name = "firefox"

    def __init__(self, args, ca):
        from marionette_driver.addons import Addons
        from marionette_driver.marionette import Marionette
        profile = tempfile.mkdtemp(dir=args.work, prefix="firefox-")
        trust(ca, profile)
        self.client = Marionette(
            host="127.0.0.1", port=free_port(), bin="/usr/bin/firefox-esr", headless=True, profile=profile,
            prefs={"network.dns.localDomains": "site.test,login.site.test,evil.test,plain.test",
                   "xpinstall.signatures.required": False, "browser.shell.checkDefaultBrowser": False},
            gecko_log=os.path.join(args.work, "gecko.log"), startup_timeout=120)
        self.client.start_session()
        self.client.set_window_rect(width=1000, height=800)
        Addons(self.client).install(args.extension, temp=True)
        self.console = []

    def open(self, url):
        self.client.navigate(url)

    def run(self, script):
        return self.client.execute_script(script, sandbox=None)

    def click_at(self, x, y, pause=0):
        sequence = self.client.actions.sequence("pointer", "mouse").pointer_move(int(x) + 3, int(y) + 2)
        if pause:
            sequence = sequence.pause(int(pause * 1000))
        sequence.pointer_move(int(x), int(y)).pointer_down().pointer_up().perform()

    def point_at(self, x, y):
        self.client.actions.sequence("pointer", "mouse").pointer_move(int(x), int(y)).perform()

    def press_here(self):
        self.client.actions.sequence("pointer", "mouse").pointer_down().pointer_up().perform()

    def click(self, element_id):
        self.client.find_element("id", element_id).click()

    def type(self, element_id, text):
        self.client.find_element("id", element_id).send_keys(text)

    def key(self, key):
        self.client.actions.sequence("key", "keyboard").key_down(key).key_up(key).perform()

    def screenshot(self):
        return self.client.screenshot(format="binary")

    def fetch(self, url):
        return self.client.execute_async_script("""const done = arguments[arguments.length - 1];
            fetch(arguments[0]).then(() => done(true), () => done(false));""", script_args=[url], sandbox=None)

    def in_menu(self, script):
        host = self.client.execute_script(MENU_HOST, sandbox=None)
        frame = host.shadow_root.find_element("css selector", "iframe")
        self.client.switch_to_frame(frame)
        try:
            return self.client.execute_script(script, sandbox=None)
        finally:
            self.client.switch_to_frame()

    def frame(self, element_id):
        self.client.switch_to_frame(self.client.find_element("id", element_id))

    def top(self):
        self.client.switch_to_frame()

    def logs(self):
        return self.console  # Marionette does not pass the page's console on

    def quit(self):
        self.client.cleanup()


# --- The person -----------------------------------------------------------------------------------

class Person:
    def __init__(self, args, browser, sites):
        self.args = args
        self.browser = browser
        self.sites = sites
        self.agent = None

    def keyport(self, *arguments, stdin=None):
        return subprocess.run([self.args.keyport, *arguments], input=stdin, capture_output=True, text=True, timeout=120)

    def start_agent(self, policy):
        self.stop_agent()
        secret = os.path.join(self.args.work, "passphrase")
        with open(secret, "w") as file:
            file.write(PASSPHRASE + "\n")
        log = open(os.path.join(self.args.work, f"agent-{policy}.log"), "w+")
        self.agent = (subprocess.Popen([self.args.keyport, "agent", "--auto", policy, "--secret-file", secret],
                                       stdout=subprocess.DEVNULL, stderr=log), log)
        for _ in range(300):
            log.seek(0)
            if "waiting" in log.read():
                return
            time.sleep(0.05)
        raise RuntimeError("the agent did not start")

    def agent_log(self):
        if not self.agent:
            return ""
        self.agent[1].flush()
        self.agent[1].seek(0)
        return self.agent[1].read()

    def stop_agent(self):
        if self.agent:
            text = self.agent_log()
            self.agent[0].terminate()
            self.agent[0].wait(timeout=30)
            self.agent = None
            return text
        return ""

    def menu(self, wait=5.0):
        """The menu's place in the top document's viewport, once it is there and steady."""
        deadline = time.time() + wait
        while time.time() < deadline:
            rect = self.browser.run(MENU_HOST.replace("return ", "const host = ", 1) + """
                if (!host) return null;
                const r = host.getBoundingClientRect();
                return {x: r.left, y: r.top, width: r.width, height: r.height};""")
            if rect:
                time.sleep(STEADY)
                return rect
            time.sleep(0.05)
        return None

    def row(self, rect, row, save=False):
        """The middle of the menu's row (0 the first), as menu.css lays it out: to save, the user
        name and the site come between the title and the rows."""
        return rect["x"] + 60, rect["y"] + 1 + 6 + 24 + (72 if save else 0) + 44 * row + 22

    def choose(self, rect, row, save=False):
        """Clicks the menu's row."""
        self.browser.click_at(*self.row(rect, row, save))

    def next_page(self, before, wait=15.0):
        """Waits for the tab's next document (the one after `before`, its performance.timeOrigin)."""
        deadline = time.time() + wait
        while time.time() < deadline:
            try:
                if self.browser.run("return performance.timeOrigin") != before:
                    return True
            except Exception:
                pass  # between two documents
            time.sleep(0.05)
        return False

    def origin_shown(self, origin):
        """Whether the menu draws the whole of `origin`: its text, in the menu's own page, lies
        inside the page and inside every box that clips it."""
        return self.browser.in_menu("""const origin = %s;
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              const at = node.data.indexOf(origin);
              if (at < 0) continue;
              const range = document.createRange();
              range.setStart(node, at);
              range.setEnd(node, at + origin.length);
              const rects = [...range.getClientRects()];
              if (rects.length === 0) return false;
              const inside = (outer) => rects.every(r => r.left >= outer.left - 0.5 && r.right <= outer.right + 0.5 &&
                r.top >= outer.top - 0.5 && r.bottom <= outer.bottom + 0.5);
              if (!inside({left: 0, top: 0, right: innerWidth, bottom: innerHeight})) return false;
              for (let e = node.parentElement; e; e = e.parentElement) {
                const style = getComputedStyle(e);
                if (style.overflowX !== "visible" || style.overflowY !== "visible") {
                  if (!inside(e.getBoundingClientRect())) return false;
                }
              }
              return true;
            }
            return false;""" % json.dumps(origin))

    def values(self, *ids):
        """The fields' values, read at one moment."""
        return self.browser.run(f"""const values = {{}};
            for (const id of {json.dumps(list(ids))}) {{ const e = document.getElementById(id); values[id] = e ? e.value : null; }}
            return values;""")

    def wait_values(self, ids, done, wait=8.0):
        deadline = time.time() + wait
        values = self.values(*ids)
        # (None while the tab is between two documents: the page navigated.)
        while time.time() < deadline and not (values is not None and done(values)):
            time.sleep(0.1)
            values = self.values(*ids)
        return values

    def login(self, url, field="user", row=0, ids=("user", "pass"), wait=8.0):
        """Focuses the field, and chooses the menu's row: what was filled."""
        self.browser.open(url)
        self.browser.click(field)
        rect = self.menu()
        if rect is None:
            time.sleep(1)
            return {"menu": False, "values": self.values(*ids)}
        self.choose(rect, row)
        values = self.wait_values(ids, lambda values: any(values.values()), wait)
        outcome = {"menu": True, "values": values}
        if not any((values or {}).values()):
            outcome["said"] = self.said()  # why not, for whoever reads a failure
        return outcome

    def said(self):
        """What the menu says below its choices (why a choice was refused)."""
        try:
            return self.browser.in_menu("return document.getElementById('status').textContent")
        except Exception as error:
            return f"(no menu: {type(error).__name__})"

    def save(self, url, user, password, site):
        """Types a sign-in into the page at `url` and sends it; on the next page, clicks the offer's
        first button: whether the offer came and showed the site whole, and what the vault gives
        for that user afterwards."""
        self.browser.open(url)
        self.browser.type("user", user)
        self.browser.type("pass", password)
        # The menu for the focused field is open on this page: the offer is looked for only once
        # the next page is there (else the old page's menu could be the one clicked).
        before = self.browser.run("return performance.timeOrigin")
        self.browser.click("go")
        self.next_page(before)
        rect = self.menu(wait=8)
        outcome = {"menu": rect is not None, "page-ready": self.browser.run("return !!document.getElementById('done')")}
        if rect:
            outcome["origin-shown"] = self.origin_shown(site)
            self.choose(rect, 0, save=True)
        # The vault saves it, and its keeper tells AutoFill, a moment after the click: asked until
        # AutoFill has it (a busy machine takes seconds).
        deadline = time.time() + 20
        while True:
            saved = self.keyport("password", f"{site}/", "--user", user)
            if (saved.stdout.strip() and saved.stdout.strip() == password) or time.time() > deadline:
                break
            time.sleep(0.5)
        outcome["saved"] = saved.stdout.strip() == password
        outcome["error"] = saved.stderr.strip()
        return outcome

    def code(self):
        """The codes oathtool gives for the vault's secret around now (a fill can straddle a period)."""
        now = int(time.time())
        return sorted({subprocess.run(["oathtool", "--totp", "--base32", "--now", f"@{moment}", SECRET],
                                      capture_output=True, text=True, check=True).stdout.strip()
                       for moment in (now - 30, now, now + 30)})


def scenarios(person, browser):
    https, http = person.sites["https"], person.sites["http"]
    site = f"https://site.test:{https}"
    results = {"browser": browser.name, "codes": None}

    results["login"] = person.login(f"{site}/login")
    results["login-from-password"] = person.login(f"{site}/login", field="pass")

    for page, ids in (("otp", ("code",)), ("otp-named", ("code",)), ("otp-boxes", tuple(f"b{i}" for i in range(6)))):
        outcome = person.login(f"{site}/{page}", field=ids[0], ids=ids)
        outcome["codes"] = person.code()
        results[page] = outcome

    # Nothing on load, nor on what the page makes up: the page's focus() opens no menu (which
    # would tell the page that Keyport has a login for it), and its made-up clicks fill nothing.
    browser.open(f"{site}/login?synthetic=1")
    results["synthetic"] = {"menu": person.menu(wait=3) is not None, "values": person.values("user", "pass")}
    # The person's click into the field the page focused opens it.
    browser.click("user")
    results["synthetic"]["clicked"] = person.menu() is not None

    # https's password is never offered to http, even on the same host; http's own is filled there.
    results["http-page"] = person.login(f"http://site.test:{http}/login")
    results["http-own"] = person.login(f"http://plain.test:{http}/login")

    # Clickjacking: the page hides, fades, clips, moves or covers the menu after it appeared. Then
    # it stops, and the same click fills (the click was where the menu is).
    for attack in ("html-opacity", "html-transform", "html-scale", "popover", "dialog", "cover-div"):
        browser.open(f"{site}/login?attack={attack}")
        browser.click("user")
        rect = person.menu()
        outcome = {"menu": rect is not None}
        if rect:
            person.choose(rect, 0)
            time.sleep(2)
            outcome["attacked"] = person.values("user", "pass")
            browser.run("window.stopAttack()")
            time.sleep(STEADY)
            person.choose(rect, 0)
            outcome["after"] = person.wait_values(("user", "pass"), lambda values: any(values.values()))
        results["attack-" + attack] = outcome

    # The page reshapes the menu or takes it out of the top layer: refused, and the menu stays
    # refused (the page touched it). Any other click in this run shows where the menu's rows are.
    for attack in ("host-opacity", "host-clip", "host-zoom", "host-moved"):
        browser.open(f"{site}/login?attack={attack}")
        browser.click("user")
        time.sleep(STEADY)
        rect = person.menu(wait=2) or {"x": 8, "y": 33}
        person.choose(rect, 0)
        time.sleep(2)
        results["attack-" + attack] = {"attacked": person.values("user", "pass")}

    # The page draws over the menu from inside its host, with pseudo-elements (which neither the
    # host's style nor elementFromPoint tell of): the menu must be what is seen where it is, and
    # what is seen is what the click chooses.
    browser.open(f"{site}/login?attack=pseudo-cover")
    browser.click("user")
    rect = person.menu()
    pseudo = {"menu": rect is not None}
    if rect:
        pseudo["covered"] = magenta_in(browser.screenshot(), rect)
        person.choose(rect, 0)
        pseudo["values"] = person.wait_values(("user", "pass"), lambda values: any(values.values()), wait=4)
    results["attack-pseudo-cover"] = pseudo

    # A cover the compositor slides over the menu while the page blocks its main thread, taken
    # away before the page draws again: the click during the block fills nothing (what was on the
    # screen then went unchecked); once the page draws steadily again, the same click fills.
    browser.open(f"{site}/login?attack=blocked-cover")
    browser.click("user")
    rect = person.menu()
    blocked = {"menu": rect is not None}
    if rect:
        x, y = person.row(rect, 0)
        # The page blocks a moment after the person's move began; their click comes while it is
        # blocked (one sequence of input, which the driver does not hold for the page).
        browser.run("setTimeout(window.startBlock, 300)")
        started = time.time()
        browser.click_at(x, y, pause=1.0)
        blocked["click-took"] = round(time.time() - started, 2)
        time.sleep(4)
        blocked["blocked"] = browser.run("return window.blocked || null")
        blocked["attacked"] = person.values("user", "pass")
        blocked["said"] = person.said()
        time.sleep(STEADY)
        person.choose(rect, 0)
        blocked["after"] = person.wait_values(("user", "pass"), lambda values: any(values.values()))
    results["attack-blocked-cover"] = blocked

    # The page makes the menu the next Tab stop: "type your name, Tab, Enter" chooses nothing.
    # Down from the field moves into the menu as the person means to, and Enter then fills.
    browser.open(f"{site}/login?tabtrap=1")
    browser.click("user")
    rect = person.menu()
    trapped = {"menu": rect is not None}
    if rect:
        browser.type("user", "mallory")
        browser.key(TAB)
        time.sleep(0.3)
        trapped["tabbed-into-menu"] = browser.run(MENU_HOST.replace("return ", "const host = ", 1) + "return document.activeElement === host;")
        browser.key(ENTER)
        time.sleep(2)
        trapped["attacked"] = person.values("user", "pass")
        trapped["said"] = person.said()
        browser.open(f"{site}/login?tabtrap=1")
        browser.click("user")
        if person.menu():
            browser.key(DOWN)
            time.sleep(0.3)
            browser.key(ENTER)
            trapped["down"] = person.wait_values(("user", "pass"), lambda values: all(values.values()))
    results["keyboard-tab-trap"] = trapped

    # A page that knows Keyport's extension id cannot find its menu page at the fixed address
    # (Chromium: the menu is only at a dynamic address). Firefox has no fixed address: each
    # install's is random.
    if browser.name == "chromium":
        browser.open(f"{site}/login")
        results["fixed-address"] = {"fetched": browser.fetch("chrome-extension://pgapgpgkilgjidgnaedbcoanfnabnedp/menu.html")}

    # The menu opens under a pointer that is already there and stays still (the person's Tab into
    # the field, the pointer resting where the menu opens): a press without a move in the menu is
    # not a choice. The same press after a move is.
    browser.open(f"{site}/login")
    browser.click("user")
    rect = person.menu()
    still = {"menu": rect is not None}
    if rect:
        browser.open(f"{site}/login")
        browser.point_at(rect["x"] + 60, rect["y"] + 1 + 6 + 24 + 22)
        browser.key("\ue004")  # Tab, from the page's start to its first field
        still["summoned"] = person.menu() is not None
        browser.press_here()
        time.sleep(2)
        still["pressed"] = person.values("user", "pass")
        person.choose(rect, 0)
        still["moved"] = person.wait_values(("user", "pass"), lambda values: any(values.values()))
        still["said"] = person.said()
    results["still-pointer"] = still

    # Hidden and transparent fields are never filled.
    results["decoys"] = person.login(f"{site}/login?decoys=1", ids=("user", "pass", "decoy-offscreen", "decoy-transparent"))

    # Frames: the top document is filled, a frame of another site in it is not.
    browser.open(f"{site}/framed")
    time.sleep(1)
    browser.click("user")
    rect = person.menu()
    framed = {"menu": rect is not None}
    if rect:
        person.choose(rect, 0)
        framed["top"] = person.wait_values(("user", "pass"), lambda values: any(values.values()))
    browser.frame("child")
    framed["child"] = person.values("user", "pass")
    browser.click("user")
    # The frame's own menu (every field's menu opens on the person's press) has nothing of the
    # top site's.
    framed["child-menu"] = person.menu(wait=3) is not None
    framed["child-said"] = person.said()
    browser.top()
    results["framed"] = framed

    # A sandboxed frame of the site's own address is of no site: nothing is listed there.
    browser.open(f"{site}/sandboxed")
    time.sleep(1)
    browser.frame("child")
    browser.click("user")
    results["sandboxed"] = {"menu": person.menu(wait=3) is not None, "values": person.values("user", "pass")}
    browser.top()

    # A page of another site covers the sign-in page it frames with a picture that lets clicks
    # through: the menu is in the framed page, where only IntersectionObserver v2 sees the cover.
    if browser.name == "chromium":
        browser.open(f"https://evil.test:{https}/frame-cover")
        time.sleep(1)
        browser.frame("child")
        browser.click("user")
        rect = person.menu()
        browser.top()
        covered = {"menu": rect is not None}
        if rect:
            person.choose(rect, 0)
            time.sleep(2)
            browser.frame("child")
            covered["values"] = person.values("user", "pass")
            browser.top()
        results["frame-cover"] = covered

    # A wider fit: offered with its site; given only once the person said yes in the agent.
    wider = f"https://login.site.test:{https}/login"
    results["wider-no-agent"] = person.login(wider)
    person.start_agent("decline")
    results["wider-declined"] = person.login(wider)
    person.stop_agent()
    person.start_agent("accept-first")
    results["wider-confirmed"] = person.login(wider)
    results["wider-confirmed"]["agent"] = person.agent_log()

    # "All passwords…": the person picks from the vault's own list in the agent.
    browser.open(f"{site}/login")
    browser.click("user")
    rect = person.menu()
    if rect:
        person.choose(rect, 1)  # one identity fits site.test: "All passwords…" is the second row
    results["all"] = {"menu": rect is not None, "values": person.wait_values(("user", "pass"), lambda v: any(v.values()))}

    # Locked: the vault asks for its passphrase through the agent, then answers.
    person.keyport("vault", "lock")
    results["locked"] = person.login(f"{site}/login")
    results["locked"]["agent"] = person.stop_agent()

    # Saving what was typed into a sign-in form, once the person says so. The user name is long:
    # the site the offer is for is still shown whole.
    long_user = "dave." + "x" * 200
    results["save"] = person.save(f"{site}/login", long_user, "n3w-pass!", site)

    # A sign-in that takes its time: the offer comes on the page after it, not on the one leaving.
    results["save-slow"] = person.save(f"{site}/login?slow=1", "erin", "sl0w-pass", site)

    # A user Keyport has: signing in with what Keyport filled offers nothing; with another
    # password (changed elsewhere), the offer is to change it, which the vault asks the person
    # to confirm in the agent (keeping the old one in the item's history).
    browser.open(f"{site}/login")
    browser.click("user")
    rect = person.menu()
    unchanged = {"menu": rect is not None}
    if rect:
        person.choose(rect, 0)
        unchanged["values"] = person.wait_values(("user", "pass"), lambda values: all(values.values()))
        before = browser.run("return performance.timeOrigin")
        browser.click("go")
        person.next_page(before)
        unchanged["offer"] = person.menu(wait=3) is not None
    results["save-unchanged"] = unchanged
    person.start_agent("accept-first")
    results["save-changed"] = person.save(f"{site}/login", "alice", "ch4nged-pass", site)
    results["save-changed"]["agent"] = person.stop_agent()
    results["console"] = browser.logs()
    return results


def bench(person, browser, runs):
    """Click → filled, in the page: the first fill (the host starting, the vault's provider warm)
    and `runs` more."""
    site = f"https://site.test:{person.sites['https']}"
    times = []
    for _ in range(runs + 1):
        browser.open(f"{site}/login")
        browser.click("user")
        rect = person.menu()
        person.choose(rect, 0)
        person.wait_values(("user", "pass"), lambda values: all(values.values()))
        time.sleep(0.2)
        lines = [line for line in browser.logs() if "ms after the gesture" in line]
        times.append(float(lines[-1].split(" ms after")[0].split()[-1]))
        browser.console.clear()
    return {"cold": times[0], "warm": times[1:]}


def arguments():
    """The command line both browser peers take."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--browser", choices=["chromium", "firefox"], required=True)
    parser.add_argument("--keyport", required=True)
    parser.add_argument("--extension", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--bench", type=int, default=0)
    return parser.parse_args()


def unlock(person):
    """Unlocks the vault as this program (the keeper lets the requester that unlocked it change
    it); false, having printed why, if it could not."""
    unlocked = person.keyport("vault", "unlock", "--passphrase-stdin", stdin=PASSPHRASE + "\n")
    if unlocked.returncode != 0:
        print(json.dumps({"error": "vault unlock: " + unlocked.stderr}))
    return unlocked.returncode == 0


def play(args, ca, person, act):
    """Starts the browser for `person`, runs `act(browser)`, and prints its report as JSON."""
    browser = Chromium(args, ca) if args.browser == "chromium" else Firefox(args, ca)
    person.browser = browser
    try:
        results = act(browser)
    finally:
        person.stop_agent()
        browser.quit()
    print(json.dumps(results))
    return 0


def main():
    args = arguments()
    ca, certificate = make_ca(args.work)
    https, https_state = serve(certificate)
    http, http_state = serve()
    https_state["https"] = http_state["https"] = https
    person = Person(args, None, {"https": https, "http": http})
    if not unlock(person):
        return 1
    for command, stdin in (
        (["vault", "add", "--passphrase-stdin", "--title", "Site", "--url", f"https://site.test:{https}/", "--user", "alice", "--otp"],
         f"hunter2\n{SECRET}\n"),
        (["vault", "add", "--passphrase-stdin", "--title", "Plain", "--url", f"http://plain.test:{http}/", "--user", "bob"],
         "plain-pass\n"),
    ):
        added = person.keyport(*command, stdin=stdin)
        if added.returncode != 0:
            print(json.dumps({"error": "vault add: " + added.stderr}))
            return 1
    return play(args, ca, person,
                lambda browser: bench(person, browser, args.bench) if args.bench else scenarios(person, browser))


if __name__ == "__main__":
    sys.exit(main())
