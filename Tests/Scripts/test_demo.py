"""scripts/demo, the README's first command, as a person runs it on a terminal and as CI runs it
piped."""

import os
import pty
import re
import select
import shlex
import tempfile
import shutil
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
        self.assertIn("Try next", ran.stdout)
        self.assertNotIn("Press Enter", ran.stdout)
        # (SwiftPM's build leaves folders of its own in TMPDIR; the demo's is keyport-demo-*.)
        left = [p for p in (self.home / "tmp").iterdir() if p.name.startswith("keyport-demo-")]
        self.assertEqual(left, [], "the demo left its directory")


if __name__ == "__main__":
    unittest.main()
