"""Runs a command on a new pseudo-terminal, as a person's terminal would, and plays a script of
steps on it: what a person sees and types, in order.

usage: pty_driver.py STEPS-JSON COMMAND [ARGUMENT...]
  STEPS-JSON is a list of steps:
    ["expect", TEXT]  wait until TEXT appears on the terminal (after what earlier steps matched)
    ["type", TEXT]    type TEXT on the terminal
    ["pause", SECONDS]
    ["say", TEXT]     print "@@ TEXT" on standard output, for the test to wait on
    ["wait-file", PATH]  wait until the file PATH exists (the test says when to go on)
  Once the steps are played it keeps relaying until the command ends. Everything the terminal
  shows is copied to standard error. A step that waits more than 60 seconds ends the driver
  with status 3 and "@@ timeout: STEP".
"""
import json
import os
import pty
import select
import sys
import time

steps = json.loads(sys.argv[1])
pid, terminal = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])

seen = b""


def pump(timeout):
    """Reads what the terminal shows for up to `timeout` seconds; False once the command ended."""
    global seen
    ready, _, _ = select.select([terminal], [], [], timeout)
    if not ready:
        return True
    try:
        data = os.read(terminal, 4096)
    except OSError:
        return False
    if not data:
        return False
    seen += data
    sys.stderr.buffer.write(data)
    sys.stderr.flush()
    return True


for step in steps:
    kind, value = step
    if kind == "expect":
        needle = value.encode()
        deadline = time.monotonic() + 60
        while needle not in seen:
            if time.monotonic() > deadline or not pump(0.1):
                print("@@ timeout: " + json.dumps(step), flush=True)
                sys.exit(3)
        seen = seen[seen.index(needle) + len(needle):]
    elif kind == "type":
        os.write(terminal, value.encode())
    elif kind == "pause":
        deadline = time.monotonic() + float(value)
        while time.monotonic() < deadline:
            pump(0.05)
    elif kind == "say":
        print("@@ " + value, flush=True)
    elif kind == "wait-file":
        deadline = time.monotonic() + 120
        while not os.path.exists(value):
            if time.monotonic() > deadline:
                print("@@ timeout: " + json.dumps(step), flush=True)
                sys.exit(3)
            pump(0.05)

while pump(1.0):
    pass
