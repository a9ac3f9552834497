"""The sanitizer runtime this test process runs under, if any (tests/sanitize.sh preloads it):
"thread", "address" or "". Tests that repeat work shorten it there: instrumented emulation is
several (ASan) to tens (TSan) of times slower, and the sanitizers look for races and bad accesses,
which a few rounds show as well as many."""

import os

_PRELOAD = os.environ.get("LD_PRELOAD", "")
SANITIZER = "thread" if "libtsan" in _PRELOAD else "address" if "libasan" in _PRELOAD else ""
