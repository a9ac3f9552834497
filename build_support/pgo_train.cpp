// Training run for the profile-guided build of ALE's core (setup.py), not part of the extension.
// Plays random actions on every ROM given, so that the profile covers the emulator's common hot
// paths (6502, TIA, RIOT, every bank-switching scheme in use) rather than any one game.
//
// usage: pgo_train FRAMES ROM...
#include <ale/ale_interface.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FRAMES ROM...\n", argv[0]);
    return 2;
  }
  const long frames = std::atol(argv[1]);
  ale::Logger::setMode(ale::Logger::Error);
  std::mt19937 rng(0);
  int played = 0;
  for (int i = 2; i < argc; ++i) {
    if (!ale::ALEInterface::isSupportedROM(argv[i])) continue;  // loadROM() would exit the process
    try {
      ale::ALEInterface ale;
      ale.setFloat("repeat_action_probability", 0.0f);  // the engine's own sticky actions
      ale.setInt("random_seed", static_cast<int>(rng() >> 1));
      ale.loadROM(argv[i]);
      const ale::ActionVect actions = ale.getMinimalActionSet();
      for (long f = 0; f < frames; ++f) {
        ale.act(actions[rng() % actions.size()]);
        if (ale.game_over()) ale.reset_game();
      }
      ++played;
    } catch (const std::exception& e) {  // what users cannot load either
      std::fprintf(stderr, "pgo_train: skipped %s: %s\n", argv[i], e.what());
    }
  }
  return played > 0 ? 0 : 1;
}
