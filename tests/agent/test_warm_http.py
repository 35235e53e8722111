"""The provider factory loads the HTTP machinery on a thread of its own, ahead of the first call."""

from __future__ import annotations

import subprocess
import sys


def fresh_process(code: str) -> list[str]:
    """What `code` prints, run in a fresh interpreter (nothing of ssw imported yet)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_http_machinery_is_loaded_in_the_background_before_the_first_client() -> None:
    """A fresh process: making the provider factory starts httpcore's import on its own thread,
    so the first call does not wait for it (it costs 40-200 ms)."""
    code = (
        "import sys\n"
        "from stepswitch.agent.providers import HttpProviders\n"
        "from stepswitch.wire import client\n"
        "assert 'httpcore' not in sys.modules, 'httpcore was imported eagerly'\n"
        "HttpProviders({})\n"
        "client._warming.join()\n"
        "print('httpcore' in sys.modules, client._warming.name)\n"
    )
    assert fresh_process(code) == ["True", "ssw-warm-http"]
