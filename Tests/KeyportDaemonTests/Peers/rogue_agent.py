"""A program of the person's that tries to take the agent's role, with PyPI's Varlink client
(nobody at Keyport wrote it): it calls org.keyport.Agent.Serve, then Answer for the question id
it is given, and prints what keyportd said to each as JSON, {"serve": ..., "answer": ...}: the
error's name, or "accepted".

usage: rogue_agent.py REQUEST-ID CHOICE
"""
import json
import os
import sys

import varlink

request, choice = sys.argv[1], sys.argv[2]
result = {}
address = "unix:" + os.environ["KEYPORT_SOCKET"]
with varlink.Client(address=address) as client:
    with client.open("org.keyport.Agent", namespaced=False) as agent:
        try:
            # The first reply of a Serve that keyportd accepts says the role is ours.
            for _ in agent.Serve(_more=True):
                result["serve"] = "accepted"
                break
        except varlink.VarlinkError as error:
            result["serve"] = error.error()
    with client.open("org.keyport.Agent", namespaced=False) as agent:
        try:
            agent.Answer(request, choice, None)
            result["answer"] = "accepted"
        except varlink.VarlinkError as error:
            result["answer"] = error.error()
print(json.dumps(result), flush=True)
