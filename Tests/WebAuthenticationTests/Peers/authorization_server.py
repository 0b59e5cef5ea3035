"""OAuth 2.0 + OpenID Connect authorization server for Keyport's web authentication tests.

Built on Authlib (AuthorizationServer, AuthorizationCodeGrant, CodeChallenge, OpenIDCode) and
Flask; every piece of state lives in memory and dies with the process.

Usage: authorization_server.py [--port 0] [--redirect-uri URI]... [--token-redirect PATH] [--verbose]

Binds 127.0.0.1 only, prints exactly one line `READY http://127.0.0.1:PORT` on stdout, then serves
until SIGTERM or SIGINT. The issuer is that base URL. Nothing else is written to stdout; request
logging goes to stderr and only with --verbose (a caller that never drains stderr must not block us).

What it offers:
- one public client `keyport-test` (no secret, PKCE S256 required, plain refused);
- redirect URIs `http://127.0.0.1/callback`, `com.example.keyport:/callback` and any --redirect-uri,
  matched exactly except that the port of a loopback IP redirect is ignored (RFC 8252 §7.3);
- one user alice / wonderland, a login form and a consent page, a persistent sign-in cookie;
- RFC 9207 `iss` in every authorization response redirect (success and error);
- discovery, JWKS (RSA key made at start-up), id_token with the request's nonce;
- GET /_test/stats for the tests;
- with --token-redirect PATH, the token endpoint answers every request with a 307 to PATH instead
  (a server moving the token request elsewhere); POST /_test/token-sink counts what arrives there
  (token_sink_requests).
"""
import argparse
import html
import logging
import re
import secrets
import signal
import sys
import threading
import time
from urllib.parse import urlsplit

from flask import Flask, jsonify, make_response, request
from joserfc.jwk import RSAKey
from werkzeug.serving import make_server

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import ClientMixin, InvalidRequestError, grants
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from authlib.oidc.core.models import AuthorizationCodeMixin

CLIENT_ID = "keyport-test"
SCOPES = ["openid", "profile", "email", "offline_access"]
DEFAULT_REDIRECT_URIS = ["http://127.0.0.1/callback", "com.example.keyport:/callback"]
USERS = {"alice": {"password": "wonderland", "name": "Alice Liddell", "email": "alice@example.com"}}
SESSION_COOKIE = "keyport_test_session"
SESSION_SECONDS = 3600
TOKEN_SECONDS = 3600

# Authority of a loopback IP literal redirect, whose port is not part of the match (RFC 8252 §7.3).
LOOPBACK_AUTHORITY = re.compile(r"(127\.0\.0\.1|\[::1\])(?::[0-9]{1,5})?")


def split_loopback(uri):
    """For `http://127.0.0.1[:port]/…` or `http://[::1][:port]/…` return the URI's parts without the
    port, as (host, path, query, fragment); None for anything else (user info in the authority,
    `localhost`, another scheme)."""
    if not uri.startswith("http://"):
        return None
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    match = LOOPBACK_AUTHORITY.fullmatch(parts.netloc)
    if not match:
        return None
    return (match.group(1), parts.path, parts.query, parts.fragment)


def redirect_uri_matches(registered, requested):
    """Exact string match (RFC 9700 §4.1.3), except that loopback IP redirects match on every part
    but the port."""
    if requested == registered:
        return True
    loop_registered = split_loopback(registered)
    return loop_registered is not None and loop_registered == split_loopback(requested)


class Client(ClientMixin):
    """The one public client. Token endpoint auth method `none`: it proves itself with PKCE only."""

    def __init__(self, redirect_uris):
        self.client_id = CLIENT_ID
        self.redirect_uris = list(redirect_uris)

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None  # a native app must always say where it wants the answer

    def get_allowed_scope(self, scope):
        # Unknown scopes never get here: OAUTH2_SCOPES_SUPPORTED makes Authlib answer invalid_scope.
        return scope or ""

    def check_redirect_uri(self, redirect_uri):
        return any(redirect_uri_matches(r, redirect_uri) for r in self.redirect_uris)

    def check_client_secret(self, client_secret):
        return False

    def check_endpoint_auth_method(self, method, endpoint):
        return method == "none"

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        # "refresh_token" is accepted only so that Authlib puts a refresh_token into the token
        # response; no refresh grant is registered, so a refresh request gets unsupported_grant_type.
        return grant_type in ("authorization_code", "refresh_token")


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, code, request, auth_time):
        self.code = code
        self.client_id = request.client.client_id
        self.redirect_uri = request.payload.redirect_uri
        self.scope = request.scope
        self.user = request.user
        self.nonce = request.payload.data.get("nonce")
        self.code_challenge = request.payload.data.get("code_challenge")
        self.code_challenge_method = request.payload.data.get("code_challenge_method")
        self.auth_time = auth_time
        self.expires_at = time.time() + 600

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.auth_time


class State:
    """Everything the server remembers, behind one lock (the server is threaded)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.codes = {}       # code -> AuthorizationCode
        self.sessions = {}    # cookie value -> (username, auth_time, expires_at)
        self.nonces = set()   # nonces that already went into a code (replays are refused)
        self.stats = {"logins": 0, "authorize_requests": 0, "tokens_issued": 0, "token_errors": 0,
                      "token_redirects": 0, "token_sink_requests": 0}

    def count(self, key):
        with self.lock:
            self.stats[key] += 1


def create_app(issuer, redirect_uris, token_redirect=None):
    app = Flask(__name__)
    app.config["OAUTH2_TOKEN_EXPIRES_IN"] = {"authorization_code": TOKEN_SECONDS}
    app.config["OAUTH2_REFRESH_TOKEN_GENERATOR"] = True  # opaque random refresh tokens
    app.config["OAUTH2_SCOPES_SUPPORTED"] = SCOPES
    state = State()
    client = Client(redirect_uris)
    key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(8), "use": "sig", "alg": "RS256"},
                              private=True)

    # --- Authlib wiring -------------------------------------------------------------------------

    class CodeGrant(grants.AuthorizationCodeGrant):
        TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

        def save_authorization_code(self, code, req):
            item = AuthorizationCode(code, req, auth_time=req.user["auth_time"])
            with state.lock:
                state.codes[code] = item
                if item.nonce:
                    state.nonces.add(item.nonce)

        def query_authorization_code(self, code, client_):
            with state.lock:
                item = state.codes.get(code)
            if item and item.client_id == client_.client_id and item.expires_at > time.time():
                return item
            return None

        def delete_authorization_code(self, authorization_code):
            with state.lock:
                state.codes.pop(authorization_code.code, None)

        def authenticate_user(self, authorization_code):
            return authorization_code.user

    class S256Challenge(CodeChallenge):
        """PKCE required at the authorization endpoint, and S256 only (RFC 9700 §2.1.1). Authlib's
        own check lets a request without code_challenge through and defaults the method to plain."""
        SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

        def validate_code_challenge(self, grant, redirect_uri):
            data = grant.request.payload.data
            if not data.get("code_challenge"):
                raise InvalidRequestError("PKCE is required: missing 'code_challenge'.")
            if data.get("code_challenge_method") != "S256":
                raise InvalidRequestError("Only 'code_challenge_method=S256' is supported.")
            super().validate_code_challenge(grant, redirect_uri)

    class OIDCCode(OpenIDCode):
        def exists_nonce(self, nonce, req):
            with state.lock:
                return nonce in state.nonces

        def resolve_client_private_key(self, client_):
            return key

        def get_client_claims(self, client_):
            return {"iss": issuer, "aud": client_.get_client_id()}

        def get_encode_header(self, client_):
            return {"alg": "RS256", "kid": key.kid}

        def generate_user_info(self, user, scope):
            info = UserInfo(sub=user["username"])
            scopes = scope.split()
            if "profile" in scopes:
                info["name"] = USERS[user["username"]]["name"]
                info["preferred_username"] = user["username"]
            if "email" in scopes:
                info["email"] = USERS[user["username"]]["email"]
                info["email_verified"] = True
            return info

    class Issuer(IssuerParameter):
        def get_issuer(self):
            return issuer

    def save_token(token, req):
        pass  # nothing checks the opaque tokens later (there is no resource server)

    server = AuthorizationServer(app, query_client=lambda cid: client if cid == CLIENT_ID else None,
                                 save_token=save_token)
    server.register_grant(CodeGrant, [S256Challenge(required=True), OIDCCode(require_nonce=False)])
    issuer_parameter = Issuer()
    server.register_extension(issuer_parameter)  # adds iss to create_authorization_response

    # --- Sign-in sessions ------------------------------------------------------------------------

    def signed_in_user():
        """{"username", "auth_time"} for a valid sign-in cookie, else None."""
        value = request.cookies.get(SESSION_COOKIE)
        with state.lock:
            entry = state.sessions.get(value) if value else None
        if not entry or entry[2] < time.time():
            return None
        return {"username": entry[0], "auth_time": entry[1]}

    def start_session(username):
        """Remember a sign-in; returns (cookie value, user)."""
        value = secrets.token_urlsafe(32)
        now = int(time.time())
        with state.lock:
            state.sessions[value] = (username, now, now + SESSION_SECONDS)
        return value, {"username": username, "auth_time": now}

    # --- Pages -----------------------------------------------------------------------------------

    def page(title, body, status=200):
        text = (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
                f"</head><body><h1>{html.escape(title)}</h1>{body}</body></html>")
        response = make_response(text, status)
        response.headers["Content-Type"] = "text/html; charset=utf-8"
        response.headers["Cache-Control"] = "no-store"
        return response

    def login_page(error=None):
        # The form posts back to the same URL, so the authorization request's parameters stay in
        # the query string (Flask's request.values merges them with the form).
        action = html.escape(request.full_path, quote=True)
        message = f'<p id="error" role="alert">{html.escape(error)}</p>' if error else ""
        return page("Sign in to Keyport Test", f"""{message}
<form method="post" action="{action}">
  <label>Username <input id="username" name="username" autocomplete="username"></label>
  <label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
  <button id="login" type="submit" name="action" value="login">Sign in and allow</button>
  <button id="deny" type="submit" name="action" value="deny">Cancel</button>
</form>""")

    def consent_page(user, grant):
        action = html.escape(request.full_path, quote=True)
        scope = html.escape(grant.request.scope or "")
        return page("Allow access?", f"""<p>Signed in as <b id="user">{html.escape(user["username"])}</b>.
<code>{CLIENT_ID}</code> asks for: <span id="scope">{scope}</span></p>
<form method="post" action="{action}">
  <button id="allow" type="submit" name="action" value="allow">Allow</button>
  <button id="deny" type="submit" name="action" value="deny">Deny</button>
</form>""")

    def authorization_error(error):
        """An error found while validating the authorization request. Once the redirect URI is known
        to be registered Authlib sets error.redirect_uri and the client gets an error redirect (with
        iss); otherwise the person sees an error page and nothing is redirected (RFC 6749 §4.1.2.1)."""
        if error.redirect_uri:
            response = server.handle_error_response(None, error)
            issuer_parameter.add_issuer_parameter(server, response)
            return response
        description = error.description or error.error
        return page("Authorization error", f'<p id="error">{html.escape(error.error)}: '
                                           f'{html.escape(description)}</p>', status=400)

    # --- Routes ----------------------------------------------------------------------------------

    @app.route("/authorize", methods=["GET", "POST"])
    def authorize():
        if request.method == "GET":
            state.count("authorize_requests")
        user = signed_in_user()
        try:
            grant = server.get_consent_grant(end_user=user)
        except OAuth2Error as error:
            return authorization_error(error)

        if request.method == "GET":
            return consent_page(user, grant) if user else login_page()

        action = request.form.get("action")
        if action == "deny":  # the person cancels: access_denied + state + iss
            return server.create_authorization_response(grant_user=None, grant=grant)
        if action == "login":
            username = request.form.get("username", "")
            account = USERS.get(username)
            if not account or not secrets.compare_digest(account["password"], request.form.get("password", "")):
                return login_page("Wrong username or password.")
            state.count("logins")
            cookie, user = start_session(username)
            response = server.create_authorization_response(grant_user=user, grant=grant)
            # Persistent (Max-Age), so a browser profile reused across browser runs keeps it.
            response.set_cookie(SESSION_COOKIE, cookie, max_age=SESSION_SECONDS, httponly=True, path="/",
                                samesite="Lax")
            return response
        if action == "allow" and user:
            return server.create_authorization_response(grant_user=user, grant=grant)
        return login_page()  # "allow" without a (still) valid sign-in

    @app.route("/token", methods=["POST"])
    def token():
        if token_redirect:
            state.count("token_redirects")
            return make_response("", 307, {"Location": token_redirect})
        response = server.create_token_response()
        state.count("tokens_issued" if response.status_code == 200 else "token_errors")
        return response

    @app.route("/jwks")
    def jwks():
        return jsonify({"keys": [key.as_dict(private=False)]})

    @app.route("/.well-known/openid-configuration")
    def discovery():
        return jsonify({
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "jwks_uri": f"{issuer}/jwks",
            "scopes_supported": SCOPES,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "name",
                                 "preferred_username", "email", "email_verified"],
            "authorization_response_iss_parameter_supported": True,
        })

    @app.route("/_test/token-sink", methods=["POST"])
    def token_sink():
        state.count("token_sink_requests")
        return jsonify({"error": "invalid_grant"}), 400

    @app.route("/_test/stats")
    def stats():
        with state.lock:
            return jsonify(dict(state.stats))

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 lets the system choose")
    parser.add_argument("--redirect-uri", action="append", default=[], metavar="URI",
                        help="register one more redirect URI (repeatable)")
    parser.add_argument("--token-redirect", metavar="PATH",
                        help="answer every token request with a 307 redirect to PATH")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    args = parser.parse_args()

    # The issuer needs the port, the app needs the issuer: bind first with a placeholder app.
    holder = {}
    http = make_server("127.0.0.1", args.port, lambda env, start: holder["app"](env, start), threaded=True)
    issuer = f"http://127.0.0.1:{http.server_port}"
    holder["app"] = create_app(issuer, DEFAULT_REDIRECT_URIS + args.redirect_uri, args.token_redirect)
    if not args.verbose:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)

    # Block SIGTERM/SIGINT before any thread starts (threads inherit the mask), serve on a thread,
    # and let the main thread wait for either signal synchronously: no handler code runs at an
    # arbitrary point, and shutdown() finishes the request in progress.
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    thread = threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    print(f"READY {issuer}", flush=True)
    signal.sigwait(stop_signals)
    http.shutdown()
    http.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
