"""Keyport as a person installs it: scripts/install into a prefix and scripts/package's Debian
package, each run with the build tree out of the way.

scripts/test runs these after the Swift tests (their build would race the release build):
    .venv/bin/python3 -m unittest discover -s Tests/Scripts -v
KEYPORT_INSTALL_CONFIGURATION=debug makes the install a debug build (quicker, for trying a change
to the test itself); scripts/test leaves it unset, so the release build is what is tested.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from support import REPOSITORY, person, run, wait_for

PASSPHRASE = "installed passphrase"


class BuildTreeAway:
    """Moves .build aside for the duration: the installed programs must not need it."""

    def __enter__(self):
        self.away = REPOSITORY / ".build.away-for-installed-test"
        (REPOSITORY / ".build").rename(self.away)
        return self

    def __exit__(self, *_):
        self.away.rename(REPOSITORY / ".build")


def exe(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


class System:
    """keyportd started as its installed unit says (socket activation), with an agent that
    answers for the person, and Keyport Vault made, registered and enabled."""

    def __init__(self, bin_dir: Path, env, test):
        self.bin, self.env, self.test = bin_dir, env, test
        self.processes = []
        socket = Path(env["XDG_RUNTIME_DIR"]) / "keyport/keyportd.sock"
        socket.parent.mkdir(mode=0o700, exist_ok=True)
        # As systemd would: the listening socket on descriptor 3 (the unit's ListenStream), and the
        # person's environment (systemd-socket-activate passes on only what -E names).
        passed = [f"--setenv={name}" for name in env if name in ("PATH", "HOME", "TMPDIR") or name.startswith("XDG_")]
        self.keyportd = self.start(
            ["systemd-socket-activate", "-l", socket, *passed, bin_dir / "keyportd", "--allow-scripted-agent"],
            "keyportd",
        )
        wait_for(socket.exists, f"{socket}")
        run([self.bin / "keyport", "vault", "init", "--passphrase-stdin"], env, input=PASSPHRASE + "\n")
        run([self.bin / "keyport", "providers", "enable", "org.keyport.vault"], env)

    def start(self, arguments, name):
        with open(Path(self.env["HOME"]) / f"{name}.log", "w") as log:
            process = subprocess.Popen([str(a) for a in arguments], env=self.env, stdout=log, stderr=log)
        self.processes.append(process)
        return process

    def exchange_and_fill(self):
        """The sample comes in through a credential exchange; AutoFill gives its code."""
        secret = Path(self.env["HOME"]) / "passphrase"
        secret.write_text(PASSPHRASE + "\n")
        agent_log = Path(self.env["HOME"]) / "agent.log"
        self.start(
            [self.bin / "keyport", "agent", "--auto", "accept:org.keyport.vault", "--secret-file", secret], "agent"
        )
        wait_for(lambda: "waiting" in agent_log.read_text(), "the agent")
        run([self.bin / "keyport", "exchange", "export", REPOSITORY / "Examples/sample.cxf.json"], self.env)
        # The importer unlocked the vault, not this session: the passphrase lets it read.
        listed = run([self.bin / "keyport", "vault", "list", "--passphrase-stdin"], self.env,
                     input=PASSPHRASE + "\n").stdout
        self.test.assertIn("example.com", listed)
        # The vault's keeper hands AutoFill the new identities just after the import.
        code = None
        for _ in range(100):
            result = run([self.bin / "keyport", "otp", "example.com"], self.env, check=False)
            if result.returncode == 0:
                code = result.stdout.strip()
                break
            time.sleep(0.1)
        self.test.assertIsNotNone(code, "AutoFill gave no code for example.com")
        self.test.assertRegex(code, r"^\d{6}$")

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
        self.keepers(signal.SIGTERM)

    def keepers(self, send=None):
        """The vault keepers running from this install's keyport-vault."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and (exe(entry.name) or "").startswith(str(self.bin / "keyport-vault")):
                found.append(int(entry.name))
                if send:
                    os.kill(int(entry.name), send)
        return found


def exec_start(unit: Path):
    return next(line.split("=", 1)[1] for line in unit.read_text().splitlines() if line.startswith("ExecStart="))


def files_under(root: Path):
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


class InstallTests(unittest.TestCase):
    def test_install_run_upgrade_uninstall(self):
        work = Path(tempfile.mkdtemp(prefix="keyport-installed-"))
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        prefix, home = work / "prefix", work / "home"
        env = person(home)
        # Folders that were there before: the uninstall leaves them, empty as they are.
        theirs = [prefix / "share/man", home / ".config/systemd"]
        for folder in theirs:
            folder.mkdir(parents=True)
        installed = run(["scripts/install", "--prefix", prefix], env, input="")
        self.assertIn("no systemd user manager", installed.stdout)
        self.assertIn("keyport vault init", installed.stdout)

        programs = ["keyport", "keyport-cli", "keyportd", "keyport-vault", "keyport-browser"]
        for program in programs:
            self.assertTrue(os.access(prefix / "bin" / program, os.X_OK), program)
        # A temporary prefix is not on systemd's unit path: the units go to the person's own.
        units = home / ".config/systemd/user"
        self.assertTrue((units / "keyportd.socket").is_file())
        for completion in ["bash-completion/completions/keyport", "zsh/site-functions/_keyport",
                           "fish/vendor_completions.d/keyport.fish"]:
            self.assertIn("keyport", (prefix / "share" / completion).read_text(), completion)
        manual = prefix / "share/man/man1/keyport.1"
        self.assertIn(".Dt KEYPORT 1", manual.read_text())
        self.assertTrue((prefix / "share/man/man1/keyport.vault.1").is_file(), sorted(os.listdir(manual.parent)))
        host = json.loads((home / ".config/chromium/NativeMessagingHosts/org.keyport.browser.json").read_text())
        self.assertEqual(host["path"], str(prefix / "bin/keyport-browser"))
        self.assertTrue((prefix / "share/keyport/browser/manifest.json").is_file())
        record = (prefix / "share/keyport/installed-files").read_text().split()
        self.assertIn(str(units / "keyportd.service"), record)
        self.assertIn(str(prefix / "bin/keyportd"), record)
        version = run([prefix / "bin/keyport", "--version"], env).stdout.strip()
        self.assertRegex(version, r"^\d+\.\d+\.\d+$")
        for program in ["keyportd", "keyport-vault"]:
            self.assertEqual(run([prefix / "bin" / program, "--version"], env).stdout.strip(), version, program)

        self.assertEqual(exec_start(units / "keyportd.service"), str(prefix / "bin/keyportd"))
        with BuildTreeAway():
            system = System(prefix / "bin", env, self)
            self.addCleanup(system.stop)
            system.exchange_and_fill()
            doctor = run([prefix / "bin/keyport", "doctor"], env, check=False).stdout
            self.assertIn(f"starting {prefix}/bin/keyportd", doctor)
        self.assertTrue(system.keepers(), "the vault's keeper runs after the import")

        # Again: nothing rewritten, nothing stopped.
        before = files_under(prefix) | files_under(units)
        again = run(["scripts/install", "--prefix", prefix], env, input="")
        self.assertIn("is up to date", again.stdout)
        after = files_under(prefix) | files_under(units)
        self.assertEqual([p for p in after if before.get(p) != after[p]], [], "rewritten by an install that changed nothing")
        self.assertIsNone(system.keyportd.poll(), "keyportd was stopped by an install that changed nothing")

        # An upgrade: the running keyportd's and keeper's programs differ from the built ones.
        sizes = {}
        for program in ["keyportd", "keyport-vault"]:
            path = prefix / "bin" / program
            sizes[program] = path.stat().st_size
            older = path.with_suffix(".older")
            shutil.copy2(path, older)
            with open(older, "ab") as file:
                file.write(b"\0")
            older.rename(path)
        upgraded = run(["scripts/install", "--prefix", prefix], env, input="")
        self.assertIn("Keyport Vault was locked", upgraded.stdout)
        system.keyportd.wait(30)
        wait_for(lambda: not system.keepers(), "the old keeper to stop")
        for program, size in sizes.items():
            self.assertEqual((prefix / "bin" / program).stat().st_size, size, f"{program} was not replaced")

        # Uninstall: every file it wrote and every folder it made go; the person's vault and its
        # registration stay, and so do the folders that were there before.
        # The person had enabled the units by hand, as doctor says where a user manager runs: with
        # no manager, systemctl still makes the link, and the uninstall takes it away.
        run(["systemctl", "--user", "enable", "keyportd.socket"], env)
        self.assertTrue((units / "sockets.target.wants/keyportd.socket").is_symlink())
        run(["scripts/install", "--prefix", prefix, "--uninstall"], env)
        self.assertEqual(sorted(prefix.rglob("*")), [prefix / "share", prefix / "share/man"], "left in the prefix")
        self.assertFalse(units.exists(), "the unit folder the install made is left")
        self.assertTrue(all(folder.is_dir() for folder in theirs), "a folder that was there before was removed")
        self.assertFalse((home / ".config/chromium/NativeMessagingHosts/org.keyport.browser.json").exists())
        self.assertTrue((home / ".local/share/keyport/vault.keyport").is_file())


class PackageTests(unittest.TestCase):
    def test_package_unpacked_and_installed(self):
        work = Path(tempfile.mkdtemp(prefix="keyport-package-"))
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        env = person(work / "home")
        # lintian runs inside scripts/package; an error of its fails this.
        run(["scripts/package", work / "out"], env)
        deb = next((work / "out").glob("keyport_*.deb"))
        listed = run(["dpkg-deb", "--contents", deb], env).stdout
        for path in [
            "./usr/bin/keyport", "./usr/bin/keyport-cli", "./usr/bin/keyportd", "./usr/bin/keyport-vault",
            "./usr/bin/keyport-browser", "./usr/lib/systemd/user/keyportd.socket",
            "./usr/lib/systemd/user/keyportd.service", "./usr/share/keyport/browser/manifest.json",
            "./etc/chromium/native-messaging-hosts/org.keyport.browser.json",
            "./usr/lib/mozilla/native-messaging-hosts/org.keyport.browser.json",
            "./usr/share/man/man1/keyport.1.gz", "./usr/share/man/man1/keyportd.1.gz",
            "./usr/share/lintian/overrides/keyport",
            "./usr/share/doc/keyport/copyright",
            "./usr/share/bash-completion/completions/keyport", "./usr/share/zsh/vendor-completions/_keyport",
        ]:
            self.assertIn(path, listed)
        self.assertNotIn("installed-files", listed)
        depends = run(["dpkg-deb", "--field", deb, "Depends"], env).stdout
        self.assertIn("libc6", depends)

        root = work / "root"
        run(["dpkg-deb", "--extract", deb, root], env)
        self.assertEqual(exec_start(root / "usr/lib/systemd/user/keyportd.service"), "/usr/bin/keyportd")
        host = json.loads((root / "usr/lib/mozilla/native-messaging-hosts/org.keyport.browser.json").read_text())
        self.assertEqual(host["path"], "/usr/bin/keyport-browser")
        for program in (root / "usr/bin").iterdir():
            self.assertNotIn("swift", run(["ldd", program], env).stdout.lower(), program)
        with BuildTreeAway():
            system = System(root / "usr/bin", env, self)
            self.addCleanup(system.stop)
            system.exchange_and_fill()
        system.stop()

        # On this machine, as a person's administrator would, and removed again.
        if os.geteuid() != 0 or run(["dpkg", "--status", "keyport"], env, check=False).returncode == 0:
            self.skipTest("not root, or a keyport package is installed here already")
        run(["dpkg", "--install", deb], env)
        try:
            status = run(["dpkg", "--status", "keyport"], env).stdout
            self.assertIn("Status: install ok installed", status)
            version = run(["/usr/bin/keyport", "--version"], env).stdout.strip()
            self.assertIn(f"Version: {version}", status)
            self.assertTrue(Path("/usr/lib/systemd/user/keyportd.socket").is_file())
        finally:
            run(["dpkg", "--purge", "keyport"], env)
        self.assertFalse(Path("/usr/bin/keyportd").exists())
        self.assertFalse(Path("/etc/chromium/native-messaging-hosts/org.keyport.browser.json").exists())


if __name__ == "__main__":
    unittest.main()
