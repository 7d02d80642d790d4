"""Facts about the machine a run works on."""

from __future__ import annotations

import os


def available_cpus() -> int:
    """CPUs this process may run on (the affinity mask, as a container or taskset sets it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
