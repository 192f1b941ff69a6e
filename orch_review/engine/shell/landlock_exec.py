"""The launcher of a Landlock shell: it confines itself, then execs the shell.

Run as ``python -I -S -c <this file's source> OPTIONS -- COMMAND...`` (see :mod:`.landlock`):
standard library only, imported by nothing, so that it starts in milliseconds and needs no
file of the installed package. In order, it

1. starts a new session (no controlling terminal to push input into);
2. sets hard resource limits (``--limit RESOURCE=VALUE``);
3. builds a Landlock ruleset (step 6), opening its paths with the rights it starts with;
4. run as root, drops to ``--uid`` with no groups;
5. sets ``no_new_privs``;
6. applies the Landlock ruleset: ``--read`` paths may be read and executed, ``--write`` paths
   read, written and changed, nothing else; no TCP bind or connect (ABI 4+); no signals to,
   nor abstract Unix sockets of, processes outside the sandbox (ABI 6+). Landlock also keeps
   ptrace, and so ``/proc/PID/environ`` and ``mem``, of every process outside the sandbox out
   of reach;
7. installs a seccomp filter: ``socket()`` of any family but ``AF_UNIX``, ``connect()`` of
   any socket (a pair of Unix sockets still works), ``ptrace``, ``process_vm_readv/writev``,
   ``pidfd_getfd``, the kernel keyring and ``io_uring`` are refused, as is any other ABI's
   syscall;
8. execs the command.

Any failure exits 125 with one line on stderr: the shell never starts unconfined.

Run as ``... --zygote FD``, it is instead a review's zygote: it serves requests on the
socket FD (its end of a private socketpair with the review process, see :mod:`.zygote`),
forking one child per shell, which takes the shell's standard streams, directory and
environment from the request and then goes through the steps above exactly as a launcher
started for that shell alone. The zygote itself stays unconfined (each child builds its own
ruleset), holds no secret (its environment is empty) and ends, killing every shell it
started, when the review process closes its end or dies.
"""

from __future__ import annotations

import _ctypes  # `ctypes` itself costs a few milliseconds more to import
import _signal  # type: ignore[import-not-found]  # `signal` imports enum: milliseconds
import os
import resource
import stat
import struct
import sys

FAILED = 125
_PREFIX = "orch-review landlock:"
# Per machine: the audit arch, the number of socket(), and of the syscalls refused outright:
# connect (a Unix socket file can lead out of the sandbox: D-Bus to systemd --user, docker),
# ptrace, process_vm_readv/writev, and the kernel keyring (add_key, request_key, keyctl).
_ARCHES = {
    "x86_64": (0xC000003E, 41, (42, 101, 310, 311, 248, 249, 250)),
    "aarch64": (0xC00000B7, 198, (203, 117, 270, 271, 217, 218, 219)),
}
_PIDFD_GETFD = 438
_LANDLOCK_CREATE_RULESET, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT_SELF = 444, 445, 446
_IO_URING = (425, 426, 427)
_X32_BIT = 0x40000000
_PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 4, 38, 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS, _EAFNOSUPPORT = 1, 38, 97
_AF_UNIX = 1

# Landlock filesystem rights: bit 0 execute ... bit 12 make_sym, 13 refer (ABI 2),
# 14 truncate (ABI 3), 15 ioctl_dev (ABI 5).
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1, 2, 4, 8
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_READ = _EXECUTE | _READ_FILE | _READ_DIR


class LaunchError(Exception):
    """The sandbox could not be set up: the command must not run."""


class _Long(_ctypes._SimpleCData):
    _type_ = "l"


class _Char(_ctypes._SimpleCData):
    _type_ = "c"


class _Function(_ctypes.CFuncPtr):
    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _Long


class Libc:
    """``syscall`` and ``prctl`` of the C library (ints pass as C ints, bytes as pointers)."""

    def __init__(self) -> None:
        # The C API reads ``_handle`` of the object given with a function's name, as of a
        # ``ctypes.CDLL``; None opens the running program, which links the C library.
        self._handle = _ctypes.dlopen(None, os.RTLD_NOW)  # type: ignore[arg-type]
        self.syscall = _Function(("syscall", self))  # type: ignore[arg-type]
        self.prctl = _Function(("prctl", self))  # type: ignore[arg-type]


def _errno() -> str:
    return os.strerror(_ctypes.get_errno())


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _syscall(libc: Libc, *args: object) -> int:
    result = int(libc.syscall(*args))
    if result < 0:
        raise LaunchError(f"syscall {args[0]} failed: {_errno()}")
    return result


def ruleset(libc: Libc, read: list[str], write: list[str]) -> int:
    """A Landlock ruleset allowing ``read`` and ``write`` and nothing else (see the module's
    docstring), as a file descriptor for :func:`restrict`."""
    abi = int(libc.syscall(_LANDLOCK_CREATE_RULESET, None, 0, 1))
    if abi < 1:
        why = _errno()
        raise LaunchError(f"Landlock is not available in this kernel or container ({why})")
    handled = _handled_fs(abi)
    fields = [handled]
    if abi >= 4:
        fields.append(3)  # bind and connect TCP: handled, and no rule allows any
    if abi >= 6:
        fields.append(3)  # scoped: abstract Unix sockets and signals
    attr = struct.pack(f"={len(fields)}Q", *fields)
    fd = _syscall(libc, _LANDLOCK_CREATE_RULESET, attr, len(attr), 0)
    for paths, rights in ((read, _READ), (write, handled)):
        for path in paths:
            _allow(libc, fd, path, rights & handled)
    return fd


def _allow(libc: Libc, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # e.g. /lib32 on a machine without it
    except OSError as exc:
        raise LaunchError(f"cannot open {path}: {exc.strerror}") from None
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        beneath = struct.pack("=Qi", rights, fd)
        _syscall(libc, _LANDLOCK_ADD_RULE, ruleset, 1, beneath, 0)
    finally:
        os.close(fd)


def seccomp(libc: Libc, machine: str) -> None:
    """Refuse network sockets, connecting any socket, reaching into other processes, the
    keyring, io_uring, and every other ABI's syscalls."""
    arch, socket, refused = _ARCHES[machine]

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    errno = _RET_ERRNO
    program = [
        op(load, 4),  # seccomp_data.arch
        op(jeq, arch, 1, 0),
        op(ret, errno | _ENOSYS),  # another ABI (i386's socketcall, x32): nothing at all
        op(load, 0),  # seccomp_data.nr
        op(jge, _X32_BIT, 0, 1),
        op(ret, errno | _ENOSYS),
        op(jeq, socket, 0, 4),
        op(load, 16),  # args[0], the address family (its low 32 bits)
        op(jeq, _AF_UNIX, 0, 1),
        op(ret, _RET_ALLOW),
        op(ret, errno | _EAFNOSUPPORT),
    ]
    for nr in (*refused, _PIDFD_GETFD):
        program += [op(jeq, nr, 0, 1), op(ret, errno | _EPERM)]
    for nr in _IO_URING:
        program += [op(jeq, nr, 0, 1), op(ret, errno | _ENOSYS)]
    program.append(op(ret, _RET_ALLOW))
    filter_code = b"".join(program)
    code = (_Char * len(filter_code)).from_buffer_copy(filter_code)
    fprog = struct.pack("@HP", len(program), _ctypes.addressof(code))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0) != 0:
        raise LaunchError(f"seccomp filter refused: {_errno()}")


def _parse(argv: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """``--read``/``--write``/``--limit``/``--uid`` items, and the command after ``--``."""
    if "--" not in argv:
        raise LaunchError("no command given (expected OPTIONS -- COMMAND...)")
    split = argv.index("--")
    options: dict[str, list[str]] = {"--read": [], "--write": [], "--limit": [], "--uid": []}
    current: list[str] | None = None
    for item in argv[:split]:
        if item in options:
            current = options[item]
        elif current is None:
            raise LaunchError(f"unexpected argument {item!r}")
        else:
            current.append(item)
    command = argv[split + 1 :]
    if not command:
        raise LaunchError("no command given")
    return options, command


def confine(options: dict[str, list[str]]) -> None:
    """Everything but the exec, in the order the module docstring gives."""
    machine = os.uname().machine
    if sys.platform != "linux" or machine not in _ARCHES:
        raise LaunchError(f"Landlock shells need Linux on x86_64 or aarch64, not {machine}")
    if os.getsid(0) != os.getpid():
        os.setsid()
    for item in options["--limit"]:
        which, value = (int(part) for part in item.split("=", 1))
        resource.setrlimit(which, (value, value))
    libc = Libc()
    rules = ruleset(libc, options["--read"], options["--write"])  # opened with our rights
    for uid in (int(u) for u in options["--uid"]):
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise LaunchError(f"no_new_privs refused: {_errno()}")
    _syscall(libc, _LANDLOCK_RESTRICT_SELF, rules, 0)
    os.close(rules)
    seccomp(libc, machine)


def _find(program: str, env: dict[str, str]) -> str:
    """``program`` looked up on PATH (``os.execvp`` would import a module, which the dropped
    uid may no longer be able to read)."""
    if "/" in program:
        return program
    for directory in env.get("PATH", "/usr/bin:/bin").split(":"):
        candidate = os.path.join(directory, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise LaunchError(f"{program}: command not found")


def _main(argv: list[str]) -> None:
    """Confine this process and exec the command, or, given ``--zygote FD``, serve."""
    if argv[:1] == ["--zygote"]:
        try:
            _serve(int(argv[1]))
        except (IndexError, ValueError, OSError, LaunchError) as exc:
            sys.stderr.write(f"{_PREFIX} zygote: {exc}\n")
            os._exit(FAILED)
        os._exit(0)
    launch(argv)


def launch(argv: list[str], env: dict[str, str] | None = None) -> None:
    """Confine this process, then exec the command with ``env`` (else this process's
    environment); exit 125 if anything fails."""
    try:
        options, command = _parse(argv)
        confine(options)
        # Python ignores these at start-up, and an ignored signal stays ignored across exec.
        for number in (_signal.SIGPIPE, _signal.SIGXFSZ):
            _signal.signal(number, _signal.SIG_DFL)
        env = dict(os.environ) if env is None else env
        os.execve(_find(command[0], env), command, env)
    except (LaunchError, OSError, ValueError) as exc:
        sys.stderr.write(f"{_PREFIX} {exc}\n")
        sys.stderr.flush()
        os._exit(FAILED)


# Only a uid orch-review hands a root shell (confinement.unused_uid) is ever killed whole.
_THROWAWAY_UIDS = range(0x6F000000, 0x6F000000 + 0x00FFFFFF)
_MESSAGE = 1 << 18  # above what one datagram may carry with the kernel's default buffers


def _serve(control: int) -> None:
    """The zygote: answer requests on the socket ``control`` until the other end closes.

    A request is one JSON message. ``{"spawn": ARGV, "env": {...}, "cwd": DIR}`` with three
    descriptors (the shell's stdin, stdout, stderr) forks a child that runs :func:`launch`
    with ARGV (the launcher's options, ``--``, the command); the answer ``{"pid": N}`` comes
    once the child leads its own session, so its process group can be killed at once.
    ``{"wait": N}``, for a child that has exited or been killed, reaps it and answers
    ``{"status": S}`` (as ``subprocess`` reports it: ``-SIGNAL`` when killed).
    ``{"kill_uid": U}`` kills every process of a root shell's throwaway uid U. A request
    that cannot be served is answered ``{"error": "..."}``.
    """
    import json
    import socket

    os.set_inheritable(control, False)
    # Its /proc files (descriptors, memory) belong to root: no process of the same user, in
    # a sandbox or not, may look into it. Each shell's exec makes it dumpable again.
    if Libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise LaunchError(f"cannot make the zygote non-dumpable: {_errno()}")
    channel = socket.socket(fileno=control)
    children: dict[int, int | None] = {}  # pid -> the uid it drops to, if any
    try:
        while True:
            try:
                data, fds, flags, _ = socket.recv_fds(channel, _MESSAGE, 3)
            except OSError:
                break
            if not data and not fds:
                break  # the review process closed its end, or died
            reply: dict[str, object]
            try:
                if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                    raise LaunchError("request cut short")
                request = json.loads(data)
                if "spawn" in request:
                    reply = {"pid": _spawn(request, fds, children)}
                elif "kill_uid" in request:
                    uid = int(request["kill_uid"])
                    if uid not in _THROWAWAY_UIDS:
                        raise LaunchError(f"uid {uid} is not a shell's own")
                    _kill_uid(uid)
                    reply = {"killed": uid}
                else:
                    pid = int(request["wait"])
                    if pid not in children:
                        raise LaunchError(f"no child {pid}")
                    _, status = os.waitpid(pid, 0)
                    del children[pid]
                    reply = {"status": os.waitstatus_to_exitcode(status)}
            except (LaunchError, OSError, ValueError, KeyError, TypeError) as exc:
                reply = {"error": str(exc) or type(exc).__name__}
            finally:
                for fd in fds:
                    os.close(fd)
            try:
                channel.send(json.dumps(reply).encode())
            except OSError:
                break
    finally:
        _end(children)


def _spawn(request: dict[str, object], fds: list[int], children: dict[int, int | None]) -> int:
    argv, env, cwd = request["spawn"], request["env"], request["cwd"]
    if not (isinstance(argv, list) and isinstance(env, dict) and isinstance(cwd, str)):
        raise LaunchError("malformed request")
    if len(fds) != 3:
        raise LaunchError(f"expected 3 descriptors, got {len(fds)}")
    uids = _parse(argv)[0]["--uid"]
    ready_read, ready_write = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:
            _child(argv, env, cwd, fds, ready_write)
        children[pid] = int(uids[-1]) if uids else None
        os.close(ready_write)
        ready_write = -1
        os.read(ready_read, 1)  # end of file: the child leads its session, or is gone
    finally:
        os.close(ready_read)
        if ready_write >= 0:
            os.close(ready_write)
    return pid


def _child(argv: list[str], env: dict[str, str], cwd: str, fds: list[int], ready: int) -> None:
    """In the forked child: the shell's streams and directory, then :func:`launch`."""
    try:
        os.setsid()
        os.close(ready)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        # Nothing else of the zygote's (its control socket above all) reaches the shell.
        os.closerange(3, 1 << 20)
        os.chdir(cwd)
        launch(argv, {str(k): str(v) for k, v in env.items()})
    except BaseException as exc:  # never back into the zygote's loop
        try:
            os.write(2, f"{_PREFIX} {exc}\n".encode("utf-8", "replace"))
        finally:
            os._exit(FAILED)
    os._exit(FAILED)


def _end(children: dict[int, int | None]) -> None:
    """Kill every shell still running (its whole process group; as root, every process of
    its uid) and reap them."""
    for pid, uid in children.items():
        for kill in (os.killpg, os.kill):
            try:  # noqa: SIM105  # contextlib would cost every launcher its imports
                kill(pid, _signal.SIGKILL)
            except OSError:
                pass
        if uid is not None and uid in _THROWAWAY_UIDS:
            _kill_uid(uid)
    for pid in children:
        _reap(pid)


def _kill_uid(uid: int) -> None:
    """``kill -KILL -1`` as ``uid``: exactly the processes of that uid, those that left the
    shell's process group too."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, _signal.SIGKILL)
        finally:
            os._exit(0)
    _reap(pid)


def _reap(pid: int) -> None:
    try:  # noqa: SIM105  # contextlib would cost every launcher its imports
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


if __name__ == "__main__":
    _main(sys.argv[1:])
