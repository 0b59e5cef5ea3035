"""A Varlink client nobody at Keyport wrote (the `varlink` package from PyPI) talking to a Keyport
service: it reads the interface through GetInterfaceDescription, calls methods, streams with
"more", and reports what came back, one JSON line per step, for the Swift test to check."""
import json
import os
import sys

import varlink


def step(name, value):
    print(json.dumps({"step": name, "value": value}, sort_keys=True), flush=True)


address = "unix:" + sys.argv[1]
with varlink.Client(address=address) as client:
    with client.open("org.varlink.service", namespaced=False) as service:
        info = service.GetInfo()
        step("info", {"vendor": info["vendor"], "interfaces": info["interfaces"]})
    with client.open("org.keyport.test", namespaced=False) as test:
        step("echo", test.Echo("ab", 3))
        step("count", [reply["n"] for reply in test.Count(4, _more=True)])
        step("caller", {"reported": test.Caller(), "pid": os.getpid(), "program": os.readlink("/proc/self/exe")})
        try:
            test.Fail()
            step("fail", "no error")
        except varlink.VarlinkError as error:
            step("fail", {"error": error.error(), "parameters": error.parameters()})
    with client.open_connection() as connection:
        # A call the Python side does not check against the interface, to see the server's own check.
        connection.send(json.dumps({"method": "org.keyport.test.Echo", "parameters": {"text": 5}}).encode() + b"\0")
        reply = b""
        while not reply.endswith(b"\0"):
            chunk = connection.recv(65536)
            if not chunk:
                break
            reply += chunk
        step("invalid", json.loads(reply.rstrip(b"\0")))
