"""openat2(2) through ctypes, with every symbolic and magic link refused and no way out of the
folder it starts from (Linux >= 5.6); and whether this machine's kernel has it."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import sys
from typing import Any

_SYS_OPENAT2 = 437
# Machines whose syscall table gives openat2 number 437 (alpha and mips number it otherwise).
_OPENAT2_IS_437 = frozenset(
    {"x86_64", "amd64", "i386", "i686", "aarch64", "arm64", "armv7l", "armv6l", "riscv64"}
    | {"ppc64le", "ppc64", "s390x", "loongarch64"}
)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_BENEATH_WITHOUT_LINKS = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS

_FOLDER = os.O_RDONLY | os.O_DIRECTORY


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@functools.cache
def _syscall() -> Any:
    function = ctypes.CDLL(None, use_errno=True).syscall
    function.restype = ctypes.c_long
    return function


def openat2(dir_fd: int, rel: str, flags: int, mode: int = 0) -> int:
    """openat2(2) beneath dir_fd with no symbolic or magic link allowed anywhere on the way:
    ELOOP for a link, EXDEV for a way out."""
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _BENEATH_WITHOUT_LINKS)
    path = ctypes.c_char_p(os.fsencode(rel))
    while True:
        fd = int(
            _syscall()(
                ctypes.c_long(_SYS_OPENAT2),
                ctypes.c_int(dir_fd),
                path,
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
        )
        if fd >= 0:
            return fd
        code = ctypes.get_errno()
        if code != errno.EINTR:
            raise OSError(code, os.strerror(code), rel)


@functools.cache
def kernel_has_openat2() -> bool:
    """Whether openat2 works here: Linux >= 5.6 on a known machine, and no seccomp filter."""
    if sys.platform != "linux" or platform.machine().lower() not in _OPENAT2_IS_437:
        return False
    top = os.open("/", _FOLDER)
    try:
        os.close(openat2(top, ".", _FOLDER))
    except (OSError, AttributeError):  # ENOSYS: kernel < 5.6; EPERM: a seccomp filter
        return False
    finally:
        os.close(top)
    return True
