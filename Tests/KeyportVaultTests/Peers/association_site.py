"""A site that confirms an app for its passkeys: https on localhost, its apple-app-site-association
naming the app, behind a certificate of a test CA made here with openssl.

    association_site.py DIRECTORY APP_ID

Prints "ready PORT CA_FILE" once it listens (keyportd trusts CA_FILE through SSL_CERT_FILE), then
serves until killed; every path but /.well-known/apple-app-site-association is 404.
"""

import http.server
import json
import os
import ssl
import subprocess
import sys

directory, app_id = sys.argv[1:3]


def run(*arguments):
    subprocess.run(arguments, check=True, capture_output=True)


ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
key, csr, cert = (os.path.join(directory, name) for name in ("site.key", "site.csr", "site.pem"))
extensions = os.path.join(directory, "site.ext")
run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
    "-subj", "/CN=Keyport test CA")
run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost")
with open(extensions, "w") as f:
    f.write("subjectAltName=DNS:localhost\n")
run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2",
    "-extfile", extensions)
document = json.dumps({"applinks": {"details": []}, "webcredentials": {"apps": ["TEAMID.com.example.other", app_id]}})


class Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/.well-known/apple-app-site-association":
            self.send_error(404)
            return
        body = document.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"ready {server.server_address[1]} {ca}", flush=True)
server.serve_forever()
