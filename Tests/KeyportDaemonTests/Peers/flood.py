"""A rogue program of the person's that floods a Varlink socket: it opens CONNECTIONS connections
as fast as it can and keeps them, then starts an unfinished message of PARTIAL-BYTES bytes on
PARTIAL of them, and prints {"connected", "refused", "open"} as JSON ("open": how many the
server has not closed by then). When it runs out of descriptors it lets go of the connections
the server closed, and goes on. It holds what it has until its standard input closes.

usage: flood.py SOCKET CONNECTIONS PARTIAL PARTIAL-BYTES
"""
import json
import resource
import socket
import sys

path, count, partial, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 256), hard))


def still_open(s):
    """Whether the server has not closed this connection (a closed one reads as end of file)."""
    s.setblocking(False)
    try:
        return s.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)


held, made, refused = [], 0, 0
while made + refused < count:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        # Out of descriptors: let go of those the server closed, and go on.
        kept, gone = [], []
        for connection in held:
            (kept if still_open(connection) else gone).append(connection)
        if not gone:
            break
        for connection in gone:
            connection.close()
        held = kept
        continue
    try:
        # Blocking: when the server's backlog is full, connect waits for room.
        s.connect(path)
        s.settimeout(10)
        held.append(s)
        made += 1
    except OSError:
        refused += 1
        s.close()

start = b'{"method":"org.varlink.service.GetInfo","parameters":{"padding":"'
for s in held[-partial:]:
    try:
        s.sendall(start + b"a" * size)
    except OSError:
        pass


print(json.dumps({"connected": made, "refused": refused, "open": sum(map(still_open, held))}), flush=True)
sys.stdin.read()
