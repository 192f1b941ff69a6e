"""Run a command where the kernel seems to lack Landlock: ``python -m tests.no_landlock CMD...``.

A seccomp filter makes the three landlock_* syscalls fail with ENOSYS, as an older kernel or
a container runtime's profile does; the command and all its children inherit it. x86_64 and
aarch64 only (both number these syscalls 444-446).
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_ALLOW, _ENOSYS = 0x7FFF0000, 0x00050000 | 38


def main(command: list[str]) -> None:
    """Install the filter, then exec ``command``."""
    arch = _ARCH[platform.machine()]

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    program = [
        op(0x20, 4),  # arch
        op(0x15, arch, 1, 0),
        op(0x06, _ALLOW),
        op(0x20, 0),  # nr
        op(0x35, 444, 0, 2),  # nr >= 444 ...
        op(0x35, 447, 1, 0),  # ... and < 447
        op(0x06, _ENOSYS),
        op(0x06, _ALLOW),
    ]
    code = ctypes.create_string_buffer(b"".join(program))
    fprog = ctypes.create_string_buffer(struct.pack("@HP", len(program), ctypes.addressof(code)))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, fprog, 0, 0) != 0:
        raise SystemExit(f"seccomp: {os.strerror(ctypes.get_errno())}")
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
