"""The compiler and linker flags, written once per toolchain: setup.py builds ALE's core and the
extensions with them, tests/native/run.sh builds the engine's C++ tests with them.

Two families: GCC and Clang (Linux, macOS, MinGW) take GNU-style flags; MSVC takes its own. The
linker's part differs by platform: GNU ld (Linux) hides ALE's core and a static zlib with
--exclude-libs; Apple's ld has no such flag, so there ALE's core is compiled with hidden visibility
instead; a Windows DLL exports nothing it does not declare."""

import sys

# SB3_ALE_VEC_SANITIZE=address|thread builds everything with that sanitizer (see tests/sanitize.sh),
# at -O1 (last, so it wins over -O3), the level the sanitizers' manuals advise: a fresh machine's
# sanitizer builds are CI's longest chain. At -O3 the ASan + UBSan build took 416 CPU-seconds (the
# engine's pybind11 bindings alone 89), and the tests ran no faster than at -O1.
# -g1: line tables, all a report's stack needs (file:line of every frame); full -g's variables cost
# compile time no report uses (under ASan + UBSan, the pybind11 bindings 154 CPU-s at -g, 110 at -g1;
# core/engine.cpp 30 and 18).
SANITIZERS = {
    "": [],
    "address": ["-fsanitize=address,undefined", "-fno-sanitize=vptr", "-fno-omit-frame-pointer", "-g1", "-O1"],
    "thread": ["-fsanitize=thread", "-g1", "-O1"],
}
# ALE's core under the sanitizers: ASan without UBSan. ALE's own undefined behaviour is not ours to fix
# (the tests marked nosan keep away from the ROM that has it), and UBSan's checks made the core's -O3
# build slow: ALE's 12 largest files compiled in 174 s with them, 65 s without.
CORE_SANITIZERS = {**SANITIZERS, "address": ["-fsanitize=address", "-fno-omit-frame-pointer", "-g1", "-O1"]}
# The part of ALE's core both sanitizers leave alone: ALE's emulator proper, src/ale/emucore (the 6502,
# the TIA, the cartridges), linked as the release core's objects (setup.py takes them from its archive),
# so it is compiled once, not once per sanitizer. Both see the rest of ALE's core (the environment and
# its interface, with our patched shared colour tables, and the games' settings).
# TSan: instrumented, the emulator made each emulated frame about 50 times slower: most of CI's sanitizer
# minutes, spent after the suite. Each emulator belongs to one env, which one thread steps at a time, and
# its static tables are built under std::call_once (pthread_once, which TSan intercepts). What TSan still
# sees: the engine's side of every hand-off of an env between threads. What it no longer sees: a race on
# an emulator's own memory that no access of the engine to that env races with too.
# ASan: uninstrumented, the emulator ran the C++ tests in 13 CPU-seconds, not 22, and ASan's core built
# in 75, not 111. ASan's checks are in the instrumented code's accesses; its malloc, new and memcpy
# serve the emulator too, so an access of ours past (or after freeing) what the emulator allocated is
# still caught. What it no longer sees: the emulator's own accesses out of bounds (heap, stack or its
# globals), or to freed memory, outside memcpy and the like, also where an input of ours led them there
# (a state restored into another game). That code is ALE's (ale-py's CI runs it under ASan and UBSan).
CORE_UNINSTRUMENTED = {"thread": "emucore", "address": "emucore"}
# Our code (not ALE's core): warnings on; no FMA contraction, which would change OpenCV's float results.
ENGINE_FLAGS = ["-O3", "-Wall", "-Wextra", "-ffp-contract=off"]
# MSVC: /fp:precise never contracts to FMA (contraction needs /fp:contract); /EHsc: C++ exceptions.
ENGINE_FLAGS_MSVC = ["/O2", "/W4", "/fp:precise", "/EHsc", "/external:W0"]


def core_flags(msvc: bool, platform: str = sys.platform) -> list:
    """ALE's core: optimised, its warnings off (not our code). -g0: Python's CFLAGS add -g. No LTO:
    across ALE's own files it measured slower than without."""
    if msvc:  # WIN32: ALE's sources test it (its own build defines it), MSVC defines only _WIN32
        return ["/std:c++17", "/O2", "/w", "/EHsc", "/DWIN32"]
    hidden = ["-fvisibility=hidden"] if platform == "darwin" else []  # Apple's ld: no --exclude-libs
    windows = ["-DWIN32"] if platform == "win32" else []  # MinGW
    return ["-std=c++17", "-O3", "-w", "-fPIC", "-g0", *hidden, *windows]


def pgo_generate(kind: str, raw_dir: str = "") -> list:
    """The instrumented build of ALE's core (build_support/pgo.py), "gcc" or "clang". Clang: IR
    instrumentation (as Apple Clang has it too); its trainers name their own raw files (pgo.train)."""
    return ["-fprofile-generate", "-fprofile-update=single"] if kind == "gcc" else [f"-fprofile-generate={raw_dir}"]


def pgo_use(kind: str, profdata: str = "") -> list:
    """The final build of ALE's core from the profile. GCC optimises the functions the training never
    ran as without a profile (-fprofile-partial-training, GCC 10+), as the engine's saving and restoring
    of states (resets ahead), which the training never runs. Clang has no such flag: it marks them cold
    (apart in .text.unlikely, not inlined into hot code) and its profile-guided size optimisation
    compiles them for size. -mllvm -pgso=false (clang 14 and 16 take it) would compile them as without
    a profile, but with clang 14 it measured 0.5-3% slower (the engine's steps, the emulator alone, the
    reset probe's restores), so it is not used; LLVM 19's -mllvm -pgo-cold-func-opt only adds optsize,
    minsize or optnone to them. The -Wno-*: functions without a profile, or changed since, are not
    worth a warning."""
    if kind == "gcc":
        return ["-fprofile-use", "-fprofile-partial-training", "-Wno-missing-profile"]
    return [f"-fprofile-use={profdata}", "-Wno-profile-instr-unprofiled", "-Wno-profile-instr-out-of-date",
            "-Wno-profile-instr-missing"]


def engine_flags(msvc: bool) -> list:
    return ENGINE_FLAGS_MSVC if msvc else ENGINE_FLAGS


def system_includes(dirs: list, msvc: bool) -> list:
    """Headers that are not ours (ALE's, XLA's): -Wall -Wextra (/W4) then judge only our own code."""
    flag = "/external:I" if msvc else "-isystem"
    return [part for d in dirs for part in (flag, d)]


def hide_static_libs(platform: str = sys.platform) -> list:
    """Link flags that keep ALE's core (and a static zlib) out of the extension's exported symbols, so
    they can never bind to ale-py's own ALE loaded in the same process."""
    return ["-Wl,--exclude-libs,ALL"] if platform.startswith("linux") else []


def main() -> None:
    """`python -m build_support.native_flags KIND`: the flags of the C++ tests, for a shell."""
    print(" ".join(["-std=c++17", *ENGINE_FLAGS, *SANITIZERS[sys.argv[1] if len(sys.argv) > 1 else ""]]))


if __name__ == "__main__":
    main()
