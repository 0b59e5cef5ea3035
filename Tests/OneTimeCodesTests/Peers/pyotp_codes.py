"""Reads cases as JSON from stdin and prints pyotp's code for each, one per line.

Each case: {"secret": BASE32, "time": UNIX, "algorithm": "sha1"|"sha256"|"sha512",
"digits": N, "period": S}.
"""
import hashlib
import json
import sys

import pyotp

for case in json.load(sys.stdin):
    totp = pyotp.TOTP(case["secret"], digits=case["digits"], digest=getattr(hashlib, case["algorithm"]),
                      interval=case["period"])
    print(totp.at(case["time"]))
