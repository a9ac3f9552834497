"""Link a Linux wheel against glibc as an older release had it (the wheel's floor: ale-py's
manylinux_2_28), while compiling with this machine's GCC and glibc.

A link binds each reference to the default version of its symbol in the libraries it is linked
against: against this machine's glibc 2.36, pthread_create binds to GLIBC_2.34, and the wheel then
needs glibc 2.34. So the link is made against stubs instead: for each of glibc's libraries, a library
of the same soname that defines every symbol the real one has at a version no newer than the floor,
each at the newest such version, as its default (what a link against that release gave). They are made
here from the target's own libraries (readelf reads any architecture), and never loaded: at run time
the real glibc resolves the same versioned names. A symbol newer than the floor is then not defined,
so a reference to it stays unversioned: `unversioned_imports` finds those after the link (they are
defined in glibc_floor_shims.cpp instead).

Only used by SB3_ALE_VEC_PORTABLE=1 on Linux (setup.py), with GCC or Clang."""

import os
import re
import shlex
import subprocess
import sysconfig
from pathlib import Path

# glibc's libraries a C++ extension is linked against (the dynamic loader is found from libc.so).
LIBRARIES = ("libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1")
FLOOR = "2.28"  # ale-py 0.12.1's manylinux_2_28 wheels
SHIMS = Path(__file__).with_name("glibc_floor_shims.cpp")
# Weak references GCC's own files leave unresolved on purpose, none of them glibc's: crt's profiling
# hook, libitm's transactional-memory entry points (static libstdc++ calls them only if loaded) and
# the C++ runtime's __cxa_pure_virtual.
_TOOLCHAIN_WEAK = re.compile(r"__gmon_start__$|__cxa_pure_virtual$|_ITM_\w+$|_ZGTt\w+$")
_SYMBOL = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+(\d+)\s+(FUNC|OBJECT|IFUNC)\s+\S+\s+\S+\s+\d+\s+(\w+)@@?GLIBC_([\d.]+)")


def version_key(version: str) -> tuple:
    return tuple(int(part) for part in version.split("."))


def floor_symbols(library: Path, floor: str) -> dict:
    """{name: (version, kind, size)}: each symbol's newest version no newer than the floor."""
    text = subprocess.run(["readelf", "--dyn-syms", "-W", str(library)], capture_output=True, text=True,
                          check=True).stdout
    chosen = {}
    for line in text.splitlines():
        match = _SYMBOL.match(line)
        if not match:
            continue
        size, kind, name, version = match.groups()
        if version_key(version) > version_key(floor):
            continue
        if name not in chosen or version_key(version) > version_key(chosen[name][0]):
            chosen[name] = (version, kind, int(size))
    return chosen


def stub_source(symbols: dict) -> tuple:
    """A C file defining each symbol under a local name with its version as the default, and the
    version script that declares those versions."""
    lines = []
    for index, (name, (version, kind, size)) in enumerate(sorted(symbols.items())):
        local = f"sb3stub_{index}"
        lines.append(f"char {local}[{max(size, 1)}];" if kind == "OBJECT" else f"void {local}(void) {{}}")
        lines.append(f'__asm__(".symver {local}, {name}@@GLIBC_{version}");')
    versions = sorted({version for version, _, _ in symbols.values()}, key=version_key)
    script = "".join(f"GLIBC_{v} {{ {'local: sb3stub_*; ' if i == 0 else ''}}};\n" for i, v in enumerate(versions))
    return "\n".join(lines) + "\n", script


def real_libc(cc: list) -> tuple:
    """From the compiler's libc.so linker script: libc.so.6, libc_nonshared.a and the dynamic loader."""
    script = Path(subprocess.run([*cc, "-print-file-name=libc.so"], capture_output=True, text=True,
                                 check=True).stdout.strip())
    paths = re.findall(r"(/\S+)", script.read_text().split("GROUP", 1)[1])
    libc = next(p for p in paths if p.endswith("libc.so.6"))
    nonshared = next(p for p in paths if p.endswith("libc_nonshared.a"))
    loader = next(p for p in paths if "/ld-" in p)
    return Path(libc), Path(nonshared), Path(loader)


def compiler_command(compiler_so: list, cc: str | None = None) -> list:
    """The C compiler's own words at the head of distutils' compile command (CC, then the flags): CC
    split as a shell splits it (as distutils does), so `ccache gcc` or `clang --target=...` stays whole."""
    words = shlex.split(cc if cc is not None else os.environ.get("CC") or sysconfig.get_config_var("CC") or "")
    return words if words and list(compiler_so[:len(words)]) == words else list(compiler_so[:1])


def make_stubs(cc: list | str, out: Path, floor: str = FLOOR) -> Path:
    """Stub libraries for `cc`'s target in `out` (`cc` a command's words, or a command line), named as
    the linker looks for them (libc.so is a linker script, as glibc's own: the stub, the real
    libc_nonshared.a, the loader's stub)."""
    cc = shlex.split(cc) if isinstance(cc, str) else list(cc)
    out.mkdir(parents=True, exist_ok=True)
    libc, nonshared, loader = real_libc(cc)
    targets = {name: libc.parent / name for name in LIBRARIES}
    targets[loader.name] = loader
    for soname, real in targets.items():
        if not real.exists():
            continue
        source, script = stub_source(floor_symbols(real, floor))
        (out / f"{soname}.c").write_text(source)
        (out / f"{soname}.map").write_text(script or "{ local: *; };\n")
        subprocess.run([*cc, "-shared", "-nostdlib", "-fPIC", "-w", f"-Wl,-soname,{soname}",
                        f"-Wl,--version-script,{out / f'{soname}.map'}", "-o", str(out / soname),
                        str(out / f"{soname}.c")], check=True)
        if soname != "libc.so.6" and soname != loader.name:
            link = out / (soname.split(".so")[0] + ".so")  # what -lm, -lpthread, ... look for
            link.unlink(missing_ok=True)
            link.symlink_to(soname)
    (out / "libc.so").write_text(f"GROUP ( {out / 'libc.so.6'} {nonshared} AS_NEEDED ( {out / loader.name} ) )\n")
    return out


def link_args(stubs: Path) -> list:
    """Before the system's folders; C++'s runtime inside (libstdc++ is not on every machine at the
    version GCC 12 needs; libgcc_s is, and its unwinder finds frames without glibc 2.35's
    _dl_find_object); libpthread and libdl named, where glibc before 2.34 keeps pthread_* and dl*."""
    return [f"-L{stubs}", "-static-libstdc++", "-Wl,--no-as-needed", "-lpthread", "-ldl", "-Wl,--as-needed"]


def unversioned_imports(extension: Path) -> list:
    """The symbols the extension takes from elsewhere without a version, apart from Python's own and
    the toolchain's weak hooks: a glibc symbol newer than the floor (no stub defines it) shows up here,
    weak or not (a weak one would bind, unversioned, to whatever the running glibc has)."""
    text = subprocess.run(["readelf", "--dyn-syms", "-W", str(extension)], capture_output=True, text=True,
                          check=True).stdout
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 8 or fields[6] != "UND" or fields[4] not in ("GLOBAL", "WEAK") or "@" in fields[7]:
            continue
        if fields[7].startswith(("Py", "_Py")) or (fields[4] == "WEAK" and _TOOLCHAIN_WEAK.match(fields[7])):
            continue
        found.append(fields[7])
    return found
