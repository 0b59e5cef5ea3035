"""Serves a directory over HTTP (git's "dumb" protocol needs nothing more) on 127.0.0.1, and only
to requests with HTTP basic authentication for USER and PASSWORD; prints "READY <port>" once it
listens. Usage: git_server.py DIRECTORY USER PASSWORD"""
import base64
import functools
import http.server
import sys

directory, user, password = sys.argv[1:4]
expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="keyport test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (self.headers.get("Authorization", "-")[:5], format % args))


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=directory))
print("READY", server.server_address[1], flush=True)
server.serve_forever()
