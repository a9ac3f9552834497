"""Where the wheels tools/wheels.py builds here must differ from those a real runner's cibuildwheel
builds by pyproject.toml, and why: {(target, setting): (here, runner, reason)}. The values are what
tests/packaging/test_wheel_recipe.py reads from each side's code; a difference not listed here, or
listed with other values, fails it."""

NO_CPYTHON_314 = ("no CPython 3.14 for this target here: pyenv has 3.10-3.13, and tools/foreign_python.py builds "
                  "3.14 from Debian sid's headers for Linux x86-64 and Windows only")
NO_RUNNER = "no macOS or Windows here: the wheels are built, linked and inspected, never run"
CROSS_ENV = ("the AArch64 cross build (build_support/linux_cross.py): this machine's CPython told the target's "
             "compilers and sysconfig; a runner builds on (or emulates) an aarch64 machine")
PYTHON_FLAGS = ("the cross build names CPython's own -DNDEBUG -fwrapv, which setuptools adds on a runner from its "
                "CPython's flags; pybind11's flags in another order")
IMAGE_ZLIB = ("libz.a for SB3_ALE_VEC_PORTABLE's static zlib: the image's zlib-static (it enables powertools); "
              "here Debian's zlib1g-dev has it")
CI_TESTS = "python -m pytest -q -p no:cacheprovider -m wheel tests"

DIFFERENCES = {
    ("linux-x86_64", "before-all"): (None, "dnf install -y zlib-static", IMAGE_ZLIB),
    ("linux-x86_64", "compiler"): (
        "this machine's g++", "the manylinux_2_28 image's g++ (gcc-toolset)",
        "no docker here: Debian 12's GCC 12 against glibc 2.36, held to the floor by the stubs; the image's "
        "gcc-toolset against its own glibc 2.28, where the stubs are its own symbols"),
    ("linux-aarch64", "CPython"): ("3.10 3.11 3.12 3.13", "3.10 3.11 3.12 3.13 3.14", NO_CPYTHON_314),
    ("linux-aarch64", "before-all"): (None, "dnf install -y zlib-static", IMAGE_ZLIB),
    ("linux-aarch64", "compiler"): (
        "aarch64-linux-gnu-g++", "the manylinux_2_28 image's g++ (gcc-toolset)",
        "no AArch64 machine or image here: Debian's cross GCC 12 against Debian's arm64 glibc, held to the floor"),
    ("linux-aarch64", "environment CC"): ("aarch64-linux-gnu-gcc", None, CROSS_ENV),
    ("linux-aarch64", "environment CXX"): ("aarch64-linux-gnu-g++", None, CROSS_ENV),
    ("linux-aarch64", "environment LDCXXSHARED"): ("aarch64-linux-gnu-g++ -shared", None, CROSS_ENV),
    ("linux-aarch64", "environment LDSHARED"): ("aarch64-linux-gnu-gcc -shared", None, CROSS_ENV),
    ("linux-aarch64", "environment _PYTHON_HOST_PLATFORM"): ("linux-aarch64", None, CROSS_ENV),
    ("linux-aarch64", "environment _PYTHON_SYSCONFIGDATA_NAME"): (
        "_sysconfigdata__linux_aarch64-linux-gnu", None, CROSS_ENV),
    ("linux-aarch64", "environment SB3_ALE_VEC_PGO"): (
        "0", None, "the profile-guided build runs its trainer, an AArch64 program here; a runner runs it"),
    ("linux-aarch64", "profile-guided"): (
        "no", "yes (gcc, trained on ale-py's ROMs)", "SB3_ALE_VEC_PGO=0 in the cross build (above)"),
    ("linux-aarch64", "tests"): (
        "tests/native/aarch64_wheel.sh under qemu (CPython 3.11, 3.13, 3.14)", CI_TESTS,
        "under qemu with Debian's aarch64 CPythons (tools/arm64_python.sh): frames against ale-py's aarch64 "
        "wheel and tests/unit/test_native_units.py"),
    ("macos-arm64", "CPython"): ("3.10 3.11 3.12 3.13", "3.10 3.11 3.12 3.13 3.14", NO_CPYTHON_314),
    ("macos-arm64", "compiler"): (
        "python -m ziglang c++ -target aarch64-macos.13.0", "Xcode's clang++",
        "no Xcode or Apple SDK here: Zig's Clang and libc++ target macOS without them"),
    ("macos-arm64", "C++ runtime"): (
        "libc++ inside (Zig's)", "the system's libc++, dynamic",
        "Zig links its own libc++ statically; Xcode's clang++ links /usr/lib/libc++.1.dylib, on every macOS"),
    ("macos-arm64", "core flags"): (
        "-std=c++17 -O3 -w -fPIC -g0 -fvisibility=hidden -DNDEBUG -fwrapv",
        "-std=c++17 -O3 -w -fPIC -g0 -fvisibility=hidden", PYTHON_FLAGS),
    ("macos-arm64", "engine flags"): (
        "-std=c++17 -fvisibility=hidden -g0 -DNDEBUG -fwrapv -O3 -Wall -Wextra -ffp-contract=off",
        "-fvisibility=hidden -g0 -std=c++17 -O3 -Wall -Wextra -ffp-contract=off", PYTHON_FLAGS),
    ("macos-arm64", "environment MACOSX_DEPLOYMENT_TARGET"): (
        None, "13.0", "the cross build's target is in its compiler command (-target aarch64-macos.13.0, "
        "cross_targets.MACOS_MIN), checked equal as the deployment target"),
    ("macos-arm64", "image"): (
        "MH_DYLIB", "MH_BUNDLE",
        "Zig's linker crashes on -bundle -undefined dynamic_lookup; CPython's importer dlopen()s either"),
    ("macos-arm64", "profile-guided"): (
        "no", "yes (clang, trained on ale-py's ROMs)",
        "nothing here runs a macOS trainer; on a runner setup.py trains where it finds Clang's llvm-profdata"),
    ("macos-arm64", "repair"): (
        "none (build_support/wheel_files.py)", "delocate-wheel (cibuildwheel's default)",
        "the cross build writes the wheel whole; its extensions load only /usr/lib libraries (inspected)"),
    ("macos-arm64", "tests"): ("none (inspected: nothing here runs them)", CI_TESTS, NO_RUNNER),
    ("windows-amd64", "compiler"): (
        "x86_64-w64-mingw32ucrt-g++", "MSVC",
        "no MSVC here: MinGW-w64's GCC for the UCRT (Debian sid's, build_support/mingw_ucrt.py), whose C++ tests "
        "run under Wine (tests/native/cross_windows.sh)"),
    ("windows-amd64", "C++ runtime"): (
        "libstdc++, libgcc and winpthreads inside", "MSVC's msvcp140.dll, dynamic",
        "MinGW's runtimes linked in (no DLL of theirs to ship); MSVC's C++ runtime is msvcp140.dll, which "
        "CPython does not ship: whether the runner's repair bundles it is not checked here"),
    ("windows-amd64", "core flags"): (
        "-std=c++17 -O3 -w -fPIC -g0 -DWIN32 -DNDEBUG -fwrapv", "/std:c++17 /O2 /w /EHsc /DWIN32",
        "GCC's words against MSVC's for the same core build (native_flags.core_flags)"),
    ("windows-amd64", "engine flags"): (
        "-std=c++17 -fvisibility=hidden -g0 -DNDEBUG -fwrapv -O3 -Wall -Wextra -ffp-contract=off -Wa,-mbig-obj",
        "/EHsc /bigobj /std:c++17 /O2 /W4 /fp:precise /EHsc /external:W0",
        "GCC's words against MSVC's (native_flags.ENGINE_FLAGS_MSVC: /fp:precise never contracts to FMA, "
        "as -ffp-contract=off); -Wa,-mbig-obj is MinGW's /bigobj"),
    ("windows-amd64", "before-all"): (
        None, "vcpkg install zlib:x64-windows-static-md", "no system zlib on Windows: vcpkg's, on the runner"),
    ("windows-amd64", "environment SB3_ALE_VEC_ZLIB_ROOT"): (
        None, "C:/vcpkg/installed/x64-windows-static-md",
        "setup.py's MSVC build finds vcpkg's zlib there; the cross build links Debian's libz-mingw-w64-dev"),
    ("windows-amd64", "zlib"): (
        "inside (libz.a)", "inside (a static zlib.lib from SB3_ALE_VEC_ZLIB_ROOT)",
        "the same zlib linked in, from Debian's MinGW package here and vcpkg on the runner"),
    ("windows-amd64", "repair"): (
        "none (build_support/wheel_files.py)", "delvewheel repair (cibuildwheel's default)",
        "the cross build writes the wheel whole; its .pyd imports only system DLLs and pythonXY.dll (inspected)"),
    ("windows-amd64", "tests"): ("none (inspected: nothing here runs them)", CI_TESTS, NO_RUNNER),
}
