// The offline probe that vets a ROM's resets for computing them ahead (tools/reset_verdicts.py
// writes the package's table from it; nothing on a user's path runs it).
#pragma once

#include <string>

#include "config.hpp"

namespace sb3ale {

/// The probe's verdict on `config`'s ROM, mode, difficulty and sticky setting, from a fresh emulator:
/// "" when its reset keeps nothing of play, else why not. The ROM must be one ALE supports.
std::string probe_reset(const EnvConfig& config);

}  // namespace sb3ale
