"""The backends that confine a command, and the mount plan they all build from a
`SandboxPolicy`: bubblewrap (`Bwrap`), util-linux `unshare` with a user namespace and a /bin/sh
script that builds the new root (`Unshare`), or nothing (`NoSandbox`). Each turns a command into
the argv that runs it confined; see docs/decisions/0010-sandbox.md for the order of the mounts
and what each protects. Choosing one that works here is sandbox.py's."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from stepswitch.errors import UsageError

# The system, shown read-only; a top-level symlink (merged /usr) is recreated as a symlink.
_SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt", "nix")
# Readable by root only on the host, yet a root ssw's sandbox would show them.
_SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/ssh")
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed command sees. Deeper paths are mounted after shallower ones, and at one
    depth writable beats read-only beats hidden, so `read_only` punches through `hidden`."""

    writable: tuple[Path, ...]  # the worktree, the scratch home
    env: Mapping[str, str] = field(default_factory=dict)  # exactly what the child gets
    read_only: tuple[Path, ...] = ()  # e.g. the interpreter's prefix, the repository's .venv
    hidden: tuple[Path, ...] = ()  # covered by an empty read-only tmpfs (a file: /dev/null)
    network: bool = False


class Sandbox(Protocol):
    name: str
    confines: bool  # False only for "none": say so at the start of every run
    # Whether everything a wrapped command starts dies when ssw does, however ssw ends: the
    # sandbox's first process is killed with its parent and every other lives in its pid
    # namespace, which the kernel empties when that one ends (util/reaper.py is then not needed).
    ends_with_ssw: bool

    def argv(self, command: list[str], policy: SandboxPolicy, cwd: Path) -> list[str]: ...


Kind = Literal["ro", "rw", "hide", "symlink", "dev", "proc", "tmp", "seal"]


@dataclass(frozen=True)
class _Op:
    kind: Kind
    path: str
    target: str = ""  # the symlink's target


def _depth(path: str) -> int:
    return len(Path(path).parts)


def mount_plan(policy: SandboxPolicy) -> list[_Op]:
    """The mounts, in order: the system, /dev, /proc, a private /tmp, then the policy's paths."""
    ops: list[_Op] = []
    for name in _SYSTEM:
        top = Path("/") / name
        if top.is_symlink():
            ops.append(_Op("symlink", str(top), os.readlink(top)))
        elif top.is_dir():
            ops.append(_Op("ro", str(top)))
    ops += [_Op("dev", "/dev"), _Op("proc", "/proc"), _Op("tmp", "/tmp")]
    rank = {"hide": 0, "ro": 1, "rw": 2}
    wanted: dict[str, Kind] = {}
    hidden = [*map(Path, _SYSTEM_SECRETS), *policy.hidden]
    shown = list(policy.read_only)
    if policy.network:
        shown.append(Path("/etc/resolv.conf").resolve())  # often a link into /run
    layers: list[tuple[Kind, list[Path]]] = [
        ("hide", hidden),
        ("ro", shown),
        ("rw", list(policy.writable)),
    ]
    for kind, paths in layers:
        for raw in paths:
            real = Path(raw).resolve()
            if not real.exists():
                if kind == "rw":
                    raise UsageError(f"sandbox: the writable folder {real} does not exist")
                continue  # nothing there to show or to hide
            wanted[str(real)] = kind  # the same path twice: the later, stronger kind wins
    for where, kind in sorted(wanted.items(), key=lambda item: (_depth(item[0]), rank[item[1]])):
        ops.append(_Op(kind, where))
    # Sealed last: mount points for deeper paths had to be made in them first.
    ops += [_Op("seal", op.path) for op in ops if op.kind == "hide" and Path(op.path).is_dir()]
    ops.append(_Op("seal", "/"))
    return ops


class Bwrap:
    name = "bwrap"
    confines = True
    ends_with_ssw = True  # --die-with-parent, and --unshare-all makes a pid namespace

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def argv(self, command: list[str], policy: SandboxPolicy, cwd: Path) -> list[str]:
        args = [self.binary, "--die-with-parent", "--new-session", "--unshare-all"]
        args += ["--share-net"] if policy.network else []
        args += ["--cap-drop", "ALL"]
        for op in mount_plan(policy):
            if op.kind == "ro":
                args += ["--ro-bind", op.path, op.path]
            elif op.kind == "rw":
                args += ["--bind", op.path, op.path]
            elif op.kind == "hide" and Path(op.path).is_dir():
                args += ["--tmpfs", op.path]
            elif op.kind == "hide":
                args += ["--ro-bind", "/dev/null", op.path]
            elif op.kind == "symlink":
                args += ["--symlink", op.target, op.path]
            elif op.kind in ("dev", "proc", "tmp"):
                args += [{"dev": "--dev", "proc": "--proc", "tmp": "--tmpfs"}[op.kind], op.path]
            else:
                args += ["--remount-ro", op.path]
        return [*args, "--chdir", str(Path(cwd).resolve()), "--", *command]


def _lo_up_python() -> str:
    # SIOCSIFFLAGS on "lo" with IFF_UP|IFF_RUNNING, for hosts without iproute2.
    code = (
        "import fcntl,socket,struct;s=socket.socket();"
        "fcntl.ioctl(s,0x8914,struct.pack('16sH14x',b'lo',0x41))"
    )
    return f"{shlex.quote(sys.executable)} -I -S -c {shlex.quote(code)}"


class Unshare:
    """unshare makes the namespaces; a /bin/sh script inside builds the new root from the mount
    plan on a tmpfs, pivots into it and execs the command through setpriv with no capabilities."""

    name = "unshare"
    confines = True
    ends_with_ssw = True  # setpriv --pdeathsig KILL, unshare --pid --fork --kill-child

    def __init__(self, tools: Mapping[str, str], stage: Path) -> None:
        self.tools = tools  # absolute paths: the child's PATH need not hold sbin
        self.stage = stage  # an empty host folder the new root's tmpfs is mounted on

    def argv(self, command: list[str], policy: SandboxPolicy, cwd: Path) -> list[str]:
        t = self.tools
        args = [t["setpriv"], "--pdeathsig", "KILL", "--", t["unshare"], "--user"]
        args += ["--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--ipc", "--uts"]
        args += [] if policy.network else ["--net"]
        script = self._script(policy, Path(cwd).resolve())
        return [*args, "--", "/bin/sh", "-c", script, "ssw-sandbox", *command]

    def _script(self, policy: SandboxPolicy, cwd: Path) -> str:
        q = shlex.quote
        mount = q(self.tools["mount"])
        root = q(str(self.stage))
        lines = ["set -eu", f"R={root}", f'{mount} -t tmpfs -o mode=0755 ssw-root "$R"']
        lines.append('mkdir "$R/.old"')

        def at(path: str) -> str:
            return '"$R"' + q(path)

        def mount_point(path: str, is_dir: bool) -> str:
            # Made only where missing: inside a writable bind, `: >` would empty the host's file.
            parent = at(str(Path(path).parent))
            touch = f"mkdir -p {at(path)}" if is_dir else f"mkdir -p {parent} && : > {at(path)}"
            return f"[ -e {at(path)} ] || {{ {touch}; }}"

        def bind(path: str, extra: str) -> list[str]:
            # `--bind -o ro` remounts read-only in the same call (util-linux >= 2.27).
            flags = f" -o {extra}" if extra else ""
            return [
                mount_point(path, Path(path).is_dir()),
                f"{mount} --bind{flags} {q(path)} {at(path)}",
            ]

        for op in mount_plan(policy):
            if op.kind in ("ro", "rw"):
                lines += bind(op.path, "ro" if op.kind == "ro" else "")
            elif op.kind == "hide" and Path(op.path).is_dir():
                lines += [mount_point(op.path, True), f"{mount} -t tmpfs hidden {at(op.path)}"]
            elif op.kind == "hide":
                lines += [mount_point(op.path, False), f"{mount} --bind /dev/null {at(op.path)}"]
            elif op.kind == "symlink":
                lines.append(f"ln -s {q(op.target)} {at(op.path)}")
            elif op.kind == "dev":
                lines += [f"mkdir -p {at('/dev')}"]
                lines += [f"{mount} -t tmpfs -o mode=0755 dev {at('/dev')}"]
                for dev in _DEVICES:
                    lines += [f": > {at('/dev/' + dev)}"]
                    lines += [f"{mount} --bind /dev/{dev} {at('/dev/' + dev)}"]
                for i, name in enumerate(("stdin", "stdout", "stderr")):
                    lines.append(f"ln -s /proc/self/fd/{i} {at('/dev/' + name)}")
                lines += [f"ln -s /proc/self/fd {at('/dev/fd')}", f"mkdir {at('/dev/shm')}"]
                lines.append(f"{mount} -t tmpfs -o mode=1777 shm {at('/dev/shm')}")
            elif op.kind == "proc":
                lines += [f"mkdir -p {at('/proc')}", f"{mount} -t proc proc {at('/proc')}"]
            elif op.kind == "tmp":
                lines += [f"mkdir -p {at('/tmp')}"]
                lines += [f"{mount} -t tmpfs -o mode=1777 tmp {at('/tmp')}"]
            elif op.path != "/":  # the root is sealed once it is the root
                lines.append(f"{mount} -o remount,ro {at(op.path)}")
        if not policy.network:  # a new network namespace starts with loopback down
            lo_up = f"{q(self.tools['ip'])} link set lo up" if "ip" in self.tools else ""
            lines.append(f"{lo_up or _lo_up_python()} 2>/dev/null || true")
        lines += [
            f'cd "$R" && {q(self.tools["pivot_root"])} . .old',
            f"{q(self.tools['umount'])} -l /.old && rmdir /.old && {mount} -o remount,ro /",
            f"cd {q(str(cwd))}",
            f"exec {q(self.tools['setpriv'])} --no-new-privs --inh-caps=-all --bounding-set=-all"
            ' -- "$@"',
        ]
        return "\n".join(lines)


class NoSandbox:
    name = "none"
    confines = False
    ends_with_ssw = False

    def argv(self, command: list[str], policy: SandboxPolicy, cwd: Path) -> list[str]:
        return list(command)
