"""What the tests of the scripts a person runs share: running a command, a person's environment,
waiting for something to happen."""

import os
import subprocess
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def run(arguments, env, input=None, check=True, timeout=1800):
    """Runs a command in the repository; a failure says which, with its output."""
    result = subprocess.run(
        [str(a) for a in arguments], env=env, input=input, capture_output=True, text=True,
        timeout=timeout, cwd=REPOSITORY,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, arguments))} exited {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return result


def person(home: Path):
    """A person's environment in `home`: their own base directories and runtime directory, no
    display (nothing may open a dialog), nothing of Keyport's set."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "KEYPORT_")) and k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_RUNTIME_DIR=str(home / "run"),
        XDG_DATA_DIRS=str(home / "none"),
        TMPDIR=str(home / "tmp"),
        KEYPORT_LOG="warning",
    )
    if "KEYPORT_INSTALL_CONFIGURATION" in os.environ:
        env["KEYPORT_INSTALL_CONFIGURATION"] = os.environ["KEYPORT_INSTALL_CONFIGURATION"]
    (home / "run").mkdir(parents=True, mode=0o700)
    (home / "tmp").mkdir()
    return env


def wait_for(predicate, what, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")
