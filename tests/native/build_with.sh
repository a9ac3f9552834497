# Sourced by the scripts that build the engine's C++ tests with another compiler or for another
# system (cross_windows.sh, clang_libcxx.sh, cross_aarch64.sh): one way to build them, the scripts say only what differs.
#   build_native_tests TARGET CXX AR CORE_FLAGS COMMON_FLAGS LINK_FLAGS EXE_SUFFIX
# COMMON_FLAGS go to ALE's core, the engine and the link (e.g. -stdlib=libc++); CORE_FLAGS to ALE's
# core alone, LINK_FLAGS to the link alone. ALE's core is compiled once into the build cache
# (build_support/ale_cache.py: ~/.cache/sb3-ale-vec/) as cross-TARGET-<key>/, the key naming the compiler, the flags and the patched ALE
# sources; the engine's objects and the program go to build/cross-TARGET/ and are rebuilt as make
# finds them out of date. Sets `program` (its path) and `rom` (Breakout's). Needs $python, $jobs.

build_native_tests() {
  local target=$1 cxx=$2 ar=$3 core_flags="$4${5:+ $5}" common_flags=$5 link_flags=$6 suffix=$7
  local out=build/cross-$target start=$SECONDS
  mkdir -p "$out"
  # One description of the build: ALE's sources and include folders, and the engine's flags.
  local core_sources includes flags key cache core
  mapfile -t core_sources < <($python -m build_support.ale_core sources "$out/ale-generated")
  mapfile -t includes < <($python -m build_support.ale_core includes "$out/ale-generated")
  flags="$($python -m build_support.native_flags)${common_flags:+ $common_flags}"
  key=$(printf '%s\n' "$("$cxx" --version | head -n 1)" "$core_flags" "${includes[0]}" "${core_sources[@]}" \
    | cat - "$out/ale-generated/version.hpp" | sha256sum | cut -c 1-16)
  cache=$($python -c "from build_support.ale_cache import cache_root; print(cache_root())")/cross-$target-$key
  core=$cache/libale_core.a
  program=$out/native_tests$suffix
  rom=$($python -c "from ale_py import roms; print(roms.get_rom_path('breakout'))")

  # A makefile: ALE's core into the cache (the archive renamed into place last, so an interrupted
  # build is never reused), then the engine and the tests with dependency files.
  local engine_sources=(native/*.cpp native/core/*.cpp native/env/*.cpp native/frames/*.cpp tests/native/*.cpp)
  local s o
  {
    echo "CXX := $cxx"
    echo "INCLUDES := -I native -isystem ${includes[0]} -isystem ${includes[1]}"
    if [ ! -f "$core" ]; then  # once cached, the archive alone is a prerequisite
      echo "CORE_OBJECTS :="
      for s in "${core_sources[@]}"; do
        o="$cache/obj/$(echo "${s#"${includes[0]}"/}" | tr '/' '_').o"
        echo "CORE_OBJECTS += $o"
        printf '%s: %s\n\t@mkdir -p %s\n\t$(CXX) %s $(INCLUDES) -c $< -o $@\n' "$o" "$s" "$cache/obj" "$core_flags"
      done
      printf '%s: $(CORE_OBJECTS)\n\trm -f $@.tmp\n\t%s rcs $@.tmp $^\n\tmv $@.tmp $@\n\trm -rf %s\n' \
        "$core" "$ar" "$cache/obj"
    fi
    echo "ENGINE_OBJECTS :="
    for s in "${engine_sources[@]}"; do
      o="$out/obj/${s%.cpp}.o"
      echo "ENGINE_OBJECTS += $o"
      printf '%s: %s %s\n\t@mkdir -p %s\n\t$(CXX) %s -MMD -MP $(INCLUDES) -c $< -o $@\n-include %s\n' \
        "$o" "$s" "$out/engine-flags.txt" "$(dirname "$o")" "$flags" "${o%.o}.d"
    done
    printf '%s: $(ENGINE_OBJECTS) %s\n\t$(CXX) %s $^ -lz %s -o $@\n' "$program" "$core" "$common_flags" "$link_flags"
  } > "$out/Makefile"
  # The engine's objects depend on their compiler and flags too: this file changes only with them.
  echo "$("$cxx" --version | head -n 1) $flags ${includes[*]}" > "$out/engine-flags.new"
  if cmp -s "$out/engine-flags.new" "$out/engine-flags.txt"; then rm "$out/engine-flags.new"
  else mv "$out/engine-flags.new" "$out/engine-flags.txt"; fi
  if [ -f "$core" ]; then
    echo "== ALE's core from the cache: $core"
  else
    echo "== building ALE's core ($core_flags) into $core"
  fi
  echo "== building $program with $cxx ($flags)"
  make -s -j "$jobs" -f "$out/Makefile" "$program"
  echo "== built in $((SECONDS - start)) s"
}
