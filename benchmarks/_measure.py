"""How the benchmarks measure a tool: each run in a fresh process of its own, the tools timed
in turn for several rounds (a slow spell of the machine falls on every tool alike), and for
each tool the medians of wall and CPU seconds, its peak resident memory and the load average
of the machine while it ran.

A child prints one JSON object as its last line of output. When it times a section of its own
(the work after the data is built), it reports ``call_seconds`` and ``call_cpu`` for it, as
``SECTION_CLOCK`` measures them; the parent adds the whole process's wall and CPU seconds (every
thread, from ``wait4``) and its peak resident set.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

SECTION_CLOCK = r"""
import resource as _resource, time as _time
def section_clock():
    '''(wall, CPU) seconds of this process so far: every thread's user and system time.'''
    used = _resource.getrusage(_resource.RUSAGE_SELF)
    return _time.perf_counter(), used.ru_utime + used.ru_stime
def section_since(start):
    '''{"call_seconds": wall, "call_cpu": CPU} since a section_clock() reading.'''
    wall, cpu = section_clock()
    return {"call_seconds": wall - start[0], "call_cpu": cpu - start[1]}
def peak_mb():
    return _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss / 1024
"""
"""Put in front of a child's code: ``start = section_clock()`` ... ``section_since(start)``."""


@dataclass
class Measured:
    """One run of one tool."""

    wall: float
    """Whole process, seconds."""
    cpu: float
    """Whole process, user + system seconds of every thread."""
    peak_mb: float
    result: dict
    load: float
    """The one-minute load average when the run ended."""
    stopped: str = ""
    """Why the run was stopped (a memory or time cap), or empty when it finished."""


@dataclass
class Summary:
    """Every run of one tool: medians of the times, the largest peak."""

    name: str
    runs: list[Measured] = field(default_factory=list)

    def median(self, key: str) -> float:
        if key in ("wall", "cpu", "load"):
            return statistics.median(getattr(r, key) for r in self.runs)
        return statistics.median(float(r.result[key]) for r in self.runs)

    @property
    def peak_mb(self) -> float:
        return max(r.peak_mb for r in self.runs)

    @property
    def result(self) -> dict:
        return self.runs[0].result

    @property
    def stopped(self) -> str:
        return next((r.stopped for r in self.runs if r.stopped), "")


def _resident_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def run_child(argv: Sequence[str], *, memory_cap_mb: float | None = None, time_cap_s: float | None = None,
              env: dict[str, str] | None = None, json_result: bool = True) -> Measured:
    """Run ``argv`` and measure it. A run above ``memory_cap_mb`` resident or past
    ``time_cap_s`` is stopped and reported as such (``stopped``), not raised. With
    ``json_result=False`` the command's output is not read as a result (a tool's own CLI)."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    start = time.perf_counter()
    stopped: list[str] = []
    ended = threading.Event()   # set once wait4 reaped the child (poll() here would reap it first)

    def watch() -> None:
        while not ended.wait(0.2):
            resident = _resident_mb(proc.pid)
            if memory_cap_mb is not None and resident > memory_cap_mb:
                stopped.append(f"stopped above {memory_cap_mb:,.0f} MB after {time.perf_counter() - start:.0f} s")
                proc.kill()
                return
            if time_cap_s is not None and time.perf_counter() - start > time_cap_s:
                stopped.append(f"stopped after {time_cap_s:,.0f} s")
                proc.kill()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    streams: dict[str, str] = {}
    readers = [threading.Thread(target=lambda key=key, pipe=pipe: streams.__setitem__(key, pipe.read()))
               for key, pipe in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(proc.pid, 0)   # the child's own rusage: CPU of every thread, peak RSS
    ended.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    for reader in readers:
        reader.join()
    watcher.join()
    cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    if stopped:
        return Measured(wall, cpu, peak, {}, os.getloadavg()[0], stopped[0])
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])} failed:\n{streams.get('err', '')[-3000:]}")
    result = json.loads(streams["out"].strip().splitlines()[-1]) if json_result else {}
    return Measured(wall, cpu, peak, result, os.getloadavg()[0])


def measure_fork(work: Callable[[], dict | None]) -> Measured:
    """Run ``work()`` in a forked child of this process and measure it: its wall seconds, its
    CPU seconds (every thread, from ``wait4``) and its peak resident set. The child shares what
    this process has already imported and built, so the tool's imports are not in its time; its
    peak counts the parent's pages it holds; what it holds when it starts is ``before_mb`` in the
    result (the difference is the tool's own memory). ``work`` returns a JSON-able dict."""
    read, write = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:   # the child: run, send the result, leave without running the parent's cleanup
        os.close(read)
        code = 0
        try:
            before = _resident_mb(os.getpid())   # what the child holds of the parent's pages at the start
            payload = json.dumps(dict(work() or {}, before_mb=before), default=float)
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
            payload, code = json.dumps({"error": f"{type(exc).__name__}: {exc}"}), 1
        with os.fdopen(write, "w") as pipe:
            pipe.write(payload)
        os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    result = json.loads(text) if text else {}
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(result.get("error", f"the measured child exited with {status}"))
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, result, os.getloadavg()[0])


def print_table(summaries: dict[str, Summary], *, extra: dict[str, Callable[[Summary], str]] | None = None,
                own_memory: bool = True) -> None:
    """One Markdown row per tool: medians of wall and CPU seconds, the runs' walls, the peak
    resident MB (and, for forked runs, the part above the parent's), then ``extra`` columns."""
    extra = extra or {}
    head = ["tool", "wall s (median)", "CPU s (median)", "walls of the rounds", "peak MB"]
    head += ["own MB"] if own_memory else []
    print("| " + " | ".join(head + list(extra)) + " |")
    print("|" + "---|" * (len(head) + len(extra)))
    for name, summary in summaries.items():
        if summary.stopped:
            print(f"| {name} | {summary.stopped} |" + " |" * (len(head) + len(extra) - 2))
            continue
        cells = [name, f"{summary.median('wall'):.3g}", f"{summary.median('cpu'):.3g}",
                 ", ".join(f"{r.wall:.3g}" for r in summary.runs), f"{summary.peak_mb:,.0f}"]
        if own_memory:
            cells.append(f"{max(r.peak_mb - float(r.result.get('before_mb', 0.0)) for r in summary.runs):,.0f}")
        cells += [column(summary) for column in extra.values()]
        print("| " + " | ".join(cells) + " |")


def in_turn(tools: dict[str, Callable[[], Measured | None]], repeat: int) -> dict[str, Summary]:
    """Every tool once per round, ``repeat`` rounds; a tool that returns None (not installed)
    or is stopped by a cap is left out of the later rounds."""
    summaries = {name: Summary(name) for name in tools}
    live = dict(tools)
    for _ in range(repeat):
        for name, run in list(live.items()):
            measured = run()
            if measured is None:
                del live[name], summaries[name]
                continue
            summaries[name].runs.append(measured)
            if measured.stopped:
                del live[name]
    return summaries


def load_average() -> str:
    """The machine's load average, as the tables print it."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min); {os.cpu_count()} cores"
