"""The DLLs a Windows PE image (a .pyd, a .dll, an .exe) imports, read from its import tables, and the check
that a Windows build loads only what CPython on the UCRT loads beside it.

Allowed: KERNEL32.dll, the UCRT's API sets (api-ms-win-crt-*-l1-1-0.dll, which Windows 10 and later
resolve to the UCRT, ucrtbase.dll, a part of the system; MSVC's own builds, CPython's included, import
the UCRT by these names too) and, for an extension, the CPython DLL of its version (python3XY.dll).
Anything else fails: msvcrt.dll (a second C runtime in CPython's process: its own heap, errno and
locale) or a MinGW DLL (libstdc++-6, libgcc_s_seh-1, libwinpthread-1, zlib1: none ships with Windows).

    python -m build_support.pe_imports FILE [--python 3.12]   # the DLLs, then the check's verdict
"""

from __future__ import annotations

import argparse
import re
import struct
import sys
from pathlib import Path

UCRT_API_SET = re.compile(r"api-ms-win-crt-[a-z]+-l1-1-0\.dll")
SYSTEM = {"kernel32.dll"}
_IMPORT, _DELAY_IMPORT = 1, 13  # the optional header's data directories: imports, delay-load imports


def imported_dlls(data: bytes) -> list:
    """Every DLL named in the image's import and delay-load import tables, in their order."""
    if data[:2] != b"MZ":
        raise ValueError("not a PE image (no MZ header)")
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        raise ValueError("not a PE image (no PE signature)")
    sections_count, optional_size = struct.unpack_from("<H12xH", data, pe + 6)
    optional = pe + 24
    magic = struct.unpack_from("<H", data, optional)[0]
    directories = optional + {0x10B: 96, 0x20B: 112}[magic]  # PE32, PE32+
    sections = [struct.unpack_from("<8xIIII", data, optional + optional_size + 40 * i) for i in range(sections_count)]

    def offset(rva: int) -> int:  # an address in the loaded image, found in the file
        for size, address, raw_size, raw in sections:
            if address <= rva < address + max(size, raw_size):
                return raw + rva - address
        raise ValueError(f"address {rva:#x} lies in no section")

    def name(rva: int) -> str:
        start = offset(rva)
        return data[start:data.index(b"\0", start)].decode("ascii")

    dlls = []
    for index, size, name_field in ((_IMPORT, 20, 3), (_DELAY_IMPORT, 32, 1)):
        rva = struct.unpack_from("<I", data, directories + 8 * index)[0]
        if not rva:
            continue
        at = offset(rva)
        while any(data[at:at + size]):  # a descriptor of zeros ends the table
            dlls.append(name(struct.unpack_from(f"<{size // 4}I", data, at)[name_field]))
            at += size
    return dlls


def outside_ucrt(dlls: list, python: str | None = None) -> list:
    """The DLLs outside what the check allows (python: "3.12" allows python312.dll)."""
    allowed = SYSTEM | ({f"python{python.replace('.', '')}.dll"} if python else set())
    return [d for d in dlls if d.lower() not in allowed and not UCRT_API_SET.fullmatch(d.lower())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--python", help="the CPython version an extension is for, e.g. 3.12")
    args = parser.parse_args()
    dlls = imported_dlls(args.file.read_bytes())
    print("\n".join(dlls))
    bad = outside_ucrt(dlls, args.python)
    print(f"{args.file.name}: " + (f"imports {', '.join(bad)}: outside the UCRT's list" if bad else "the UCRT's only"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
