"""scripts/demo, the README's first command, as a person runs it on a terminal and as CI runs it
piped."""

import os
import pty
import re
import select
import shlex
import tempfile
import shutil
import subprocess
import time
import unittest
from pathlib import Path

from support import REPOSITORY, person, run, wait_for


def processes_with(variable: str):
    """The processes whose environment holds `variable` (NAME=value) exactly."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if variable.encode() in environ:
            found.append((int(entry.name), [c.decode() for c in command if c]))
    return found


class DemoTests(unittest.TestCase):
    def setUp(self):
        self.home = Path(tempfile.mkdtemp(prefix="keyport-demo-test-"))
        self.addCleanup(shutil.rmtree, self.home, ignore_errors=True)
        self.env = person(self.home)

    def test_on_a_terminal_it_stays_up_for_the_person_until_enter(self):
        pid, terminal = pty.fork()
        if pid == 0:
            os.chdir(REPOSITORY)
            os.execve("scripts/demo", ["scripts/demo"], self.env)
        output = b""
        deadline = time.monotonic() + 900
        while b"Press Enter" not in output:
            self.assertLess(time.monotonic(), deadline, output.decode(errors="replace"))
            ready, _, _ = select.select([terminal], [], [], 1)
            if ready:
                try:
                    output += os.read(terminal, 65536)
                except OSError:
                    self.fail(f"the demo ended before asking for Enter:\n{output.decode(errors='replace')}")
        text = output.decode(errors="replace").replace("\r\n", "\n")
        self.assertRegex(text, r"one-time code for example.com, from Keyport Vault:\n\d{6}\n")
        exported = re.search(r"^  export (.*)$", text, re.MULTILINE)
        self.assertIsNotNone(exported, text)
        variables = dict(word.split("=", 1) for word in shlex.split(exported.group(1)))
        env = dict(self.env)
        env.update({k: v for k, v in variables.items() if k != "PATH"})
        bin_dir = variables["PATH"].split(":")[0]
        self.assertTrue(os.access(f"{bin_dir}/keyport", os.X_OK), variables["PATH"])
        demo = Path(variables["KEYPORT_SOCKET"]).parents[1]

        # The system answers from another terminal; keyportd now takes no scripted answers, and
        # with no agent running and no display, an exchange is refused at once.
        # Every item at once only for a terminal that unlocked the vault itself (as "Try next"
        # says); before, with nobody to ask, it is refused.
        refused = run([f"{bin_dir}/keyport", "vault", "list"], env, check=False)
        self.assertNotEqual(refused.returncode, 0, refused.stdout)
        self.assertIn("keyport vault unlock", refused.stderr)
        run([f"{bin_dir}/keyport", "vault", "unlock", "--passphrase-stdin"], env, input="demo passphrase\n")
        listed = run([f"{bin_dir}/keyport", "vault", "list"], env).stdout
        self.assertIn("example.com", listed)
        daemons = [c for _, c in processes_with(f"KEYPORT_SOCKET={variables['KEYPORT_SOCKET']}")
                   if c and c[0].endswith("/keyportd")]
        self.assertEqual(len(daemons), 1, daemons)
        self.assertNotIn("--allow-scripted-agent", daemons[0])
        refused = run([f"{bin_dir}/keyport", "exchange", "export", REPOSITORY / "Examples/sample.cxf.json"],
                      env, check=False)
        self.assertEqual(refused.returncode, 1, refused.stderr)
        self.assertIn("no agent is running", refused.stderr)

        os.write(terminal, b"\n")
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertFalse(demo.exists(), f"{demo} was not removed")
        wait_for(lambda: not processes_with(f"KEYPORT_SOCKET={variables['KEYPORT_SOCKET']}"),
                 "the demo's processes to stop")

    def test_piped_it_runs_through_and_cleans_up(self):
        ran = run(["scripts/demo"], self.env, input="")
        self.assertRegex(ran.stdout, r"one-time code for example.com, from Keyport Vault:\n\d{6}\n")
        # What the scripted agent answered, once each.
        self.assertEqual(ran.stdout.count("chose org.keyport.vault"), 1, ran.stdout)
        self.assertIn("To try it yourself", ran.stdout)
        self.assertNotIn("Press Enter", ran.stdout)
        self.assertNotIn("Fetching", ran.stdout + ran.stderr)
        # (SwiftPM's build leaves folders of its own in TMPDIR; the demo's is keyport-demo-*.)
        left = [p for p in (self.home / "tmp").iterdir() if p.name.startswith("keyport-demo-")]
        self.assertEqual(left, [], "the demo left its directory")

    def test_kept_it_answers_the_person_and_stops_as_it_says(self):
        # Its output in a file: what it leaves running would hold a pipe open.
        with open(self.home / "demo.out", "w+") as out:
            subprocess.run(["scripts/demo"], cwd=REPOSITORY, env=dict(self.env, KEEP="1"), stdin=subprocess.DEVNULL,
                           stdout=out, stderr=subprocess.STDOUT, check=True, timeout=900)
            out.seek(0)
            text = out.read()
        exported = re.search(r"^  export (.*)$", text, re.MULTILINE)
        self.assertIsNotNone(exported, text)
        variables = dict(word.split("=", 1) for word in shlex.split(exported.group(1)))
        socket = f"KEYPORT_SOCKET={variables['KEYPORT_SOCKET']}"
        demo = Path(variables["KEYPORT_SOCKET"]).parents[1]
        self.addCleanup(shutil.rmtree, demo, ignore_errors=True)
        stop = re.search(r"To stop it:\n  (.*)$", text, re.MULTILINE)
        self.assertIsNotNone(stop, text)
        stop = Path(stop.group(1))
        self.addCleanup(lambda: stop.exists() and subprocess.run([stop], check=False))

        # As on a terminal: no scripted agent, and keyportd takes none; the vault's keeper runs.
        running = [c for _, c in processes_with(socket)]
        self.assertFalse([c for c in running if "--auto" in c], running)
        daemons = [c for c in running if c and c[0].endswith("/keyportd")]
        self.assertEqual(len(daemons), 1, running)
        self.assertNotIn("--allow-scripted-agent", daemons[0])
        vault = f"KEYPORT_VAULT_SOCKET={variables['KEYPORT_VAULT_SOCKET']}"
        self.assertTrue([c for _, c in processes_with(vault) if "keeper" in c], processes_with(vault))

        # Its stop command, run where the person uses the system (the variables exported), stops
        # the demo's processes, the keeper too, and removes the directory; what else the person
        # started there goes on.
        used = dict(self.env, **{k: v for k, v in variables.items() if k != "PATH"})
        theirs = subprocess.Popen(["sleep", "120"], env=used)
        self.addCleanup(theirs.kill)
        subprocess.run([stop], env=used, check=True, timeout=60)
        left = lambda: [p for p, _ in processes_with(socket) + processes_with(vault) if p != theirs.pid]
        wait_for(lambda: not left(), "the kept demo's processes to stop")
        self.assertFalse(demo.exists(), f"{demo} was not removed")
        self.assertIsNone(theirs.poll(), "the stop script stopped a process of the person's")


if __name__ == "__main__":
    unittest.main()
