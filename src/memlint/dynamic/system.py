"""Process and machine memory figures that need no torch: RSS and available RAM."""

from __future__ import annotations

import ctypes
import functools
import os
import resource


def rss_bytes() -> int:
    """Current resident set size; the peak (ru_maxrss) where /proc is missing."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


@functools.cache
def _mallinfo2():
    """glibc's ``mallinfo2`` (2.33 and later), or None (musl, macOS, an older glibc)."""
    try:
        function = ctypes.CDLL(None).mallinfo2  # the C library is in the process already
    except (OSError, AttributeError):
        return None
    function.restype = _MallInfo2
    function.argtypes = []
    return function


def malloc_free_bytes() -> int:
    """Bytes that malloc holds free (freed chunks it keeps for reuse, its top chunk); 0 when unknown.

    After a large buffer is freed among small blocks that live on, malloc cannot give the
    memory back to the system: RSS keeps it although nothing uses it. How much depends on the
    order of allocations, which a tracker that allocates a little per tensor shifts: measured
    on a residual CNN keeping ``total += loss``, RSS grew 0.6-7 MiB/step from run to run, with
    and without memlint, while RSS less these bytes grew 61 KiB/step every time.
    """
    mallinfo2 = _mallinfo2()
    return int(mallinfo2().fordblks) if mallinfo2 is not None else 0


def resident_in_use() -> int:
    """RSS less what malloc holds free: the resident memory the process is using."""
    return rss_bytes() - malloc_free_bytes()


def available_ram() -> int | None:
    """MemAvailable from /proc/meminfo (bytes), or None when unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def descendants(pid: int) -> list[int]:
    """All live descendants of ``pid`` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: fields start after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def is_running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (killed, waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")
