"""An importing app, as keyportd starts one: it finds its activity and one-time token in its
environment and redeems the token over Varlink with PyPI's client (nobody at Keyport wrote it).

usage: importer.py OUTPUT [MODE]
  MODE "import" (default): import once, write {"activity", "data"} as JSON to OUTPUT.
  MODE "unique": the same, to OUTPUT-TOKEN (several exchanges at once).
  MODE "twice": import, then try the same token again; write {"activity", "data", "second": error}.
  MODE "wait": write the token to OUTPUT.token, wait until OUTPUT.go exists, then import.
  MODE "report": import, write the token to OUTPUT.token, wait until OUTPUT.go exists, then
       report (ReportImport) 3 items kept, "three kept".
"""
import json
import os
import sys
import time

import varlink

output = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "import"
token = os.environ["KEYPORT_IMPORT_TOKEN"]
if mode == "unique":
    output = output + "-" + token
result = {"activity": os.environ.get("KEYPORT_ACTIVITY_TYPE")}



def wait_for_go():
    """Writes the token for the test, and waits until it says go."""
    # Written whole, then renamed: the test reads it as soon as the name appears.
    with open(output + ".token.tmp", "w") as f:
        f.write(token)
    os.rename(output + ".token.tmp", output + ".token")
    # A test that never says go (keyportd stopped first) must not leave this process behind.
    deadline = time.monotonic() + 60
    while not os.path.exists(output + ".go"):
        if time.monotonic() > deadline or not os.path.isdir(os.path.dirname(output)):
            sys.exit(1)
        time.sleep(0.05)


if mode == "wait":
    wait_for_go()

with varlink.Client(address="unix:" + os.environ["KEYPORT_SOCKET"]) as client:
    with client.open("org.keyport.Exchange", namespaced=False) as exchange:
        result["data"] = exchange.ImportCredentials(token)["data"]
        if mode == "twice":
            try:
                exchange.ImportCredentials(token)
                result["second"] = "accepted"
            except varlink.VarlinkError as error:
                result["second"] = error.error()
        if mode == "report":
            wait_for_go()
            exchange.ReportImport(token, 3, False, "three kept")

with open(output + ".tmp", "w") as f:
    json.dump(result, f)
os.rename(output + ".tmp", output)
