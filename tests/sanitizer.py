"""The sanitizer runtime this test process runs under, if any (tests/sanitize.sh preloads it):
"thread", "address" or "". Tests that repeat work shorten it under ASan, whose instrumented
emulation is several times slower, and which looks for bad accesses, that a few rounds show as well
as many. Under TSan they run in full: its build leaves ALE's emulator proper uninstrumented
(build_support/native_flags.py, CORE_UNINSTRUMENTED), so emulation runs at about its usual speed,
and more rounds are more interleavings of the threads it watches."""

import os

_PRELOAD = os.environ.get("LD_PRELOAD", "")
SANITIZER = "thread" if "libtsan" in _PRELOAD else "address" if "libasan" in _PRELOAD else ""
