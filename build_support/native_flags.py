"""The compiler flags of the engine's own code, written once: setup.py builds the extensions with
them and tests/native/run.sh builds the engine's C++ tests with them."""

# SB3_ALE_VEC_SANITIZE=address|thread builds everything with that sanitizer (see tests/sanitize.sh).
SANITIZERS = {
    "": [],
    "address": ["-fsanitize=address,undefined", "-fno-sanitize=vptr", "-fno-omit-frame-pointer", "-g"],
    "thread": ["-fsanitize=thread", "-g"],
}
# Our code (not ALE's core): warnings on; no FMA contraction, which would change OpenCV's float results.
ENGINE_FLAGS = ["-O3", "-Wall", "-Wextra", "-ffp-contract=off"]


def main() -> None:
    """`python -m build_support.native_flags KIND`: the flags of the C++ tests, for a shell."""
    import sys

    print(" ".join(["-std=c++17", *ENGINE_FLAGS, *SANITIZERS[sys.argv[1] if len(sys.argv) > 1 else ""]]))


if __name__ == "__main__":
    main()
