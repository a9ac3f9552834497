// What a reset left on an emulator, as bytes to compare: the resets computed ahead (reset_ahead.*)
// check their swaps with it, and the offline probe (reset_probe.*) vets a ROM's resets with it.
#pragma once

#include <memory>
#include <string>

#include "ale/ale_interface.hpp"
#include "config.hpp"

namespace sb3ale {

/// A configured ALE interface, ROM not loaded: every emulator of an env (live and spare) alike.
std::unique_ptr<ale::ALEInterface> make_ale(const EnvConfig& config, int ale_max_frames);

/// `state`'s frame counter as if its episode began at frame `start` (the episode's own count kept):
/// a swapped-in reset goes on from the live emulator's counter, and state_of compares from 0.
void count_frames_from(ale::ALEState& state, int start);
/// The saved state (the frames the reset counted itself as both counters, so that where the frame
/// counter stood before does not matter), the RAM and the screen. Not the environment RNG: rng_of.
std::string state_of(ale::ALEInterface& ale);
/// The environment RNG's state (sticky actions draw it twice a frame; some modes' set-up draws it).
std::string rng_of(ale::ALEInterface& ale);
/// Sets `to`'s environment RNG to `from`'s.
void copy_rng(ale::ALEInterface& from, ale::ALEInterface& to);

}  // namespace sb3ale
