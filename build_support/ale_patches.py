"""Our build-time changes to ALE's fetched sources, and the patched copy of them the build compiles.

One change, in src/ale/environment/phosphor_blend.*: ALE's PhosphorBlend builds 512 KiB of colour-
averaging tables in its constructor, that is in every ALEInterface::loadROM (and so in every seeded
reset), about 130 ms of CPU each, even when colour averaging is off (the default, and in all our
presets). The tables are a pure function of the palette's 256 entries and the blend ratio. Patched,
the constructor only saves that palette as a key; the first process() (colour averaging on) fetches
the tables from a process-wide registry, which builds them once per distinct key, under a
std::once_flag outside the registry's mutex, and shares them read-only. The same idea as ALE's open
pull request #740 (our code).

Each change is an exact text replacement applied in order; a text that does not occur exactly once
stops the build (AlePatchError). The patched tree lives in the build cache beside the pristine one,
named by the patches' digest, and the core's cache key includes that digest (setup.py).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from .ale_cache import publish_dir
from .ale_source import AleSourceError, ale_source_dir, pinned

PHOSPHOR_HPP = "src/ale/environment/phosphor_blend.hpp"
PHOSPHOR_CPP = "src/ale/environment/phosphor_blend.cpp"

# (file, old text, new text), applied in this order.
PATCHES = (
    (PHOSPHOR_HPP, '#include "ale/emucore/OSystem.hxx"\n', '#include <array>\n#include <memory>\n\n'
     '#include "ale/emucore/OSystem.hxx"\n'),
    (PHOSPHOR_HPP, """\
 private:
  void makeAveragePalette();
  uint8_t getPhosphor(uint8_t v1, uint8_t v2);
  uint32_t makeRGB(uint8_t r, uint8_t g, uint8_t b);
  /** Converts a RGB value to an 8-bit format */
  uint8_t rgbToNTSC(uint32_t rgb);

 private:
  stella::OSystem* m_osystem;

  uint8_t m_rgb_ntsc[64][64][64];

  uint32_t m_avg_palette[256][256];
  uint8_t m_phosphor_blend_ratio;
""", """\
  // sb3-ale-vec build patch: the tables are a pure function of the palette's 256 entries and the
  // blend ratio; they are built once per process per distinct pair, on first use, and shared.
  struct Tables {
    uint8_t rgb_ntsc[64][64][64];
    uint32_t avg_palette[256][256];
  };
  using Key = std::array<uint32_t, 257>;  // the palette's packed RGB entries, then the blend ratio

  /** The tables of `key`: built by its first caller, shared with every later one. Thread-safe. */
  static std::shared_ptr<const Tables> sharedTables(const Key& key);

 private:
  static void makeAveragePalette(const Key& key, Tables& tables);
  static uint8_t getPhosphor(uint8_t v1, uint8_t v2, uint8_t ratio);
  static uint32_t makeRGB(uint8_t r, uint8_t g, uint8_t b);
  /** Converts a RGB value to an 8-bit format */
  uint8_t rgbToNTSC(uint32_t rgb) const;

 private:
  stella::OSystem* m_osystem;

  Key m_key;                               // the palette loadROM chose, and the ratio
  std::shared_ptr<const Tables> m_tables;  // null until the first process()
  uint8_t m_phosphor_blend_ratio;
"""),
    (PHOSPHOR_CPP, '#include "ale/emucore/Console.hxx"\n', '#include <map>\n#include <mutex>\n\n'
     '#include "ale/emucore/Console.hxx"\n'),
    (PHOSPHOR_CPP, """\
  m_phosphor_blend_ratio = 77;

  makeAveragePalette();
}
""", """\
  m_phosphor_blend_ratio = 77;

  ColourPalette& palette = m_osystem->colourPalette();
  for (int c = 0; c < 256; c++) {
    m_key[c] = palette.getRGB(c);
  }
  m_key[256] = m_phosphor_blend_ratio;
}

std::shared_ptr<const PhosphorBlend::Tables> PhosphorBlend::sharedTables(const Key& key) {
  struct Entry {
    std::once_flag built;
    std::shared_ptr<const Tables> tables;
  };
  // Never destroyed, so an emulator made during exit still finds them; entries live for the process.
  static std::mutex* const mutex = new std::mutex;
  static auto* const registry = new std::map<Key, std::shared_ptr<Entry>>;
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(*mutex);
    std::shared_ptr<Entry>& slot = (*registry)[key];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  // Outside the registry's lock: other palettes' tables are built meanwhile; this key's callers wait.
  std::call_once(entry->built, [&] {
    auto tables = std::make_shared<Tables>();  // zeroed: the odd (grayscale) entries stay 0
    makeAveragePalette(key, *tables);
    entry->tables = std::move(tables);
  });
  return entry->tables;
}
"""),
    (PHOSPHOR_CPP, """\
  Console& console = m_osystem->console();
""", """\
  if (!m_tables) {
    m_tables = sharedTables(m_key);
  }
  Console& console = m_osystem->console();
"""),
    (PHOSPHOR_CPP, "    uint32_t rgb = m_avg_palette[cv][pv];\n", "    uint32_t rgb = m_tables->avg_palette[cv][pv];\n"),
    (PHOSPHOR_CPP, """\
void PhosphorBlend::makeAveragePalette() {
  ColourPalette& palette = m_osystem->colourPalette();
""", """\
void PhosphorBlend::makeAveragePalette(const Key& key, Tables& tables) {
  const uint8_t ratio = key[256];
  // ColourPalette::getRGB, on the palette the constructor saved.
  const auto getRGB = [&key](int c, int& r, int& g, int& b) {
    r = (key[c] >> 16) & 0xFF;
    g = (key[c] >> 8) & 0xFF;
    b = key[c] & 0xFF;
  };
"""),
    (PHOSPHOR_CPP, """\
      palette.getRGB(c1, r1, g1, b1);
      palette.getRGB(c2, r2, g2, b2);

      uint8_t r = getPhosphor(r1, r2);
      uint8_t g = getPhosphor(g1, g2);
      uint8_t b = getPhosphor(b1, b2);
      m_avg_palette[c1][c2] = makeRGB(r, g, b);
""", """\
      getRGB(c1, r1, g1, b1);
      getRGB(c2, r2, g2, b2);

      uint8_t r = getPhosphor(r1, r2, ratio);
      uint8_t g = getPhosphor(g1, g2, ratio);
      uint8_t b = getPhosphor(b1, b2, ratio);
      tables.avg_palette[c1][c2] = makeRGB(r, g, b);
"""),
    (PHOSPHOR_CPP, "          palette.getRGB(c1, r1, g1, b1);\n", "          getRGB(c1, r1, g1, b1);\n"),
    (PHOSPHOR_CPP, "        m_rgb_ntsc[r >> 2][g >> 2][b >> 2] = minIndex;\n",
     "        tables.rgb_ntsc[r >> 2][g >> 2][b >> 2] = minIndex;\n"),
    (PHOSPHOR_CPP, "uint8_t PhosphorBlend::getPhosphor(uint8_t v1, uint8_t v2) {\n",
     "uint8_t PhosphorBlend::getPhosphor(uint8_t v1, uint8_t v2, uint8_t ratio) {\n"),
    (PHOSPHOR_CPP, "  uint32_t blendedValue = ((v1 - v2) * m_phosphor_blend_ratio) / 100 + v2;\n",
     "  uint32_t blendedValue = ((v1 - v2) * ratio) / 100 + v2;\n"),
    (PHOSPHOR_CPP, "uint8_t PhosphorBlend::rgbToNTSC(uint32_t rgb) {\n",
     "uint8_t PhosphorBlend::rgbToNTSC(uint32_t rgb) const {\n"),
    (PHOSPHOR_CPP, "  return m_rgb_ntsc[r >> 2][g >> 2][b >> 2];\n",
     "  return m_tables->rgb_ntsc[r >> 2][g >> 2][b >> 2];\n"),
)


class AlePatchError(AleSourceError):
    pass


def patches_sha256() -> str:
    """Digest of the changes themselves: part of the patched tree's name and of the core's cache key."""
    return hashlib.sha256(json.dumps(PATCHES).encode()).hexdigest()


def patches_digest() -> str:
    """The digest as the engine names it (``_engine.ALE_PATCHES``) and the resets-ahead table's header does."""
    return patches_sha256()[:12]


def apply_patches(root: Path) -> None:
    """Applies PATCHES to the sources under `root` (an unpacked sdist), in order. Raises AlePatchError,
    naming the file and the text, unless each old text occurs exactly once when its turn comes."""
    texts = {}
    for name, old, new in PATCHES:
        text = texts.get(name)
        if text is None:
            text = (root / name).read_text()
        count = text.count(old)
        if count != 1:
            raise AlePatchError(
                f"build_support/ale_patches.py: expected this text exactly once in {root / name}, found it "
                f"{count} times; ALE's sources are not the ones the patch was written for:\n{old}")
        texts[name] = text.replace(old, new)
    for name, text in texts.items():
        (root / name).write_text(text)


def patched_source_dir(version: str) -> Path:
    """The pinned, verified ALE sources with PATCHES applied: a copy beside the pristine tree in the
    cache (which stays untouched, for builds of other versions of this package), made once."""
    _, sdist_sha, _ = pinned(version)
    final = ale_source_dir(version).parent / f"ale_py-{version}-{sdist_sha[:12]}-patched-{patches_sha256()[:12]}"
    if (final / "src" / "ale" / "ale_interface.cpp").is_file():
        return final
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=".patch-"))
    try:
        shutil.copytree(ale_source_dir(version) / "src", staging / "src")
        apply_patches(staging)
        publish_dir(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final
