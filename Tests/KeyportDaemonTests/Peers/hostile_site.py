"""A site whose well-known files attack their reader: https on localhost behind a test CA made here.

    hostile_site.py DIRECTORY MODE

MODE: `drip` (a promised 100 KiB body, sent a byte a second), `huge` (a 200 KiB body), `redirect` (a
302 to a file that would confirm), `slow` (a good file after a second; each request is written to
standard output as "request", so a reader can count them), `good`. Prints "ready PORT CA_FILE" once
it listens, then serves until killed.
"""

import http.server
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "KeyportVaultTests", "Peers"))
import association_site  # noqa: E402  (the test CA and the https server, shared)

directory, mode = sys.argv[1:3]
good = json.dumps({"webcredentials": {"apps": ["org.example.app"]}}).encode()


class Site(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        print("request", flush=True)
        if mode == "redirect" and self.path != "/elsewhere":
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = good
        if mode == "huge":
            body = b'{"webcredentials": {"apps": ["org.example.app"]}, "pad": "' + b"x" * (200 * 1024) + b'"}'
        if mode == "slow":
            time.sleep(1)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if mode == "drip":
            self.send_header("Content-Length", str(100 * 1024))
            self.end_headers()
            try:
                for byte in range(100 * 1024):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


association_site.serve(Site, 0, association_site.make_certificate(directory))
