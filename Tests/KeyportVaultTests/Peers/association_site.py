"""A site that confirms an app for its passkeys: https on localhost, its apple-app-site-association
naming the app, behind a certificate of a test CA made here with openssl (make_certificate and
serve are the other test sites' too).

    association_site.py DIRECTORY APP_ID [PORT [RELATED_ORIGIN…]]

Prints "ready PORT CA_FILE" once it listens (keyportd trusts CA_FILE through SSL_CERT_FILE), then
serves until killed, on PORT (default: a free one); with RELATED_ORIGINs, its
/.well-known/webauthn lists them (WebAuthn's Related Origin Requests, which keyportd fetches from
the relying party id's port 443). Every other path is 404.
"""

import http.server
import json
import os
import ssl
import subprocess
import sys


def run(*arguments):
    subprocess.run(arguments, check=True, capture_output=True)


def make_certificate(directory):
    """A test CA and a certificate for localhost it signed, made with openssl in `directory`:
    (CA file, certificate file, key file)."""
    ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    key, csr, cert = (os.path.join(directory, name) for name in ("site.key", "site.csr", "site.pem"))
    extensions = os.path.join(directory, "site.ext")
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=Keyport test CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost")
    with open(extensions, "w") as f:
        f.write("subjectAltName=DNS:localhost\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
        "-days", "2", "-extfile", extensions)
    return ca, cert, key


def serve(handler, port, certificate):
    """Serves `handler` over https on 127.0.0.1:`port` (0: a free one) with `certificate` (CA,
    certificate, key): says "ready PORT CA_FILE", then serves until killed."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate[1], certificate[2])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"ready {server.server_address[1]} {certificate[0]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    directory, app_id = sys.argv[1:3]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    related = sys.argv[4:]
    documents = {
        "/.well-known/apple-app-site-association":
            json.dumps({"applinks": {"details": []}, "webcredentials": {"apps": ["TEAMID.com.example.other", app_id]}}),
    }
    if related:
        documents["/.well-known/webauthn"] = json.dumps({"origins": related})

    class Site(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path not in documents:
                self.send_error(404)
                return
            body = documents[self.path].encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    serve(Site, port, make_certificate(directory))
