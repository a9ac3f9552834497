// The offline probe that vets a ROM's resets for computing them ahead (tools/reset_verdicts.py
// writes the package's table from it; nothing on a user's path runs it).
#pragma once

#include <cstdint>
#include <string>

#include "config.hpp"

namespace sb3ale {

/// How hard the probe looks. The defaults are a quick look (about half a second a key: tests, and the
/// tool's non-default modes); the tool's thorough effort plays far longer. Every play starts from the
/// state right after the first reset.
struct ProbeEffort {
  int random_plays = 1;      // plays of random actions (each held 1-16 frames) until the game is over
  int max_frames = 2000;     // frames of random play at most, in each play
  int scoring_plays = 1;     // plays that search for reward and keep their lives, then play at random
  int scoring_frames = 500;  // frames a scoring play keeps before it plays at random
  int search_width = 4;      // action sequences a scoring play tries from each state it reaches
  int search_frames = 48;    // frames of each such sequence
  int check_every = 500;     // a reset is compared every this many frames of a play, and at its end
  int scrambles = 2;         // short plays whose whole RAM is then overwritten
};

/// What the probe found, and what it cost.
struct ProbeResult {
  std::string why;     // "" when no reset kept anything of play; else the first difference, and where
  int64_t frames = 0;  // frames of play emulated (a scoring play's tried sequences included)
};

/// The probe's verdict on `config`'s ROM, mode, difficulty and sticky setting, from a fresh emulator.
/// Throws std::invalid_argument for a ROM ALE does not support or an effort out of range.
ProbeResult probe_reset(const EnvConfig& config, const ProbeEffort& effort = {});

}  // namespace sb3ale
