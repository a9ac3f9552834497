#include "env/ale_state.hpp"

#include "ale/emucore/Deserializer.hxx"
#include "ale/emucore/Serializer.hxx"

namespace sb3ale {

std::unique_ptr<ale::ALEInterface> make_ale(const EnvConfig& config, int ale_max_frames) {
  auto ale = std::make_unique<ale::ALEInterface>();
  ale->setFloat("repeat_action_probability", config.repeat_action_probability);
  ale->setInt("max_num_frames_per_episode", ale_max_frames);
  return ale;
}

void count_frames_from(ale::ALEState& state, int start) {
  const int episode = state.getEpisodeFrameNumber();
  state.incrementFrame(start - state.getFrameNumber());  // frame = start, episode moved by as many
  state.resetEpisodeFrameNumber();
  state.incrementFrame(episode);  // both on by the episode's frames
}

std::string state_of(ale::ALEInterface& ale) {
  ale::ALEState state = ale.cloneState();
  count_frames_from(state, 0);
  const auto& ram = ale.getRAM();
  const auto& screen = ale.getScreen();
  return state.serialize() + std::string(reinterpret_cast<const char*>(ram.array()), ram.size()) +
         std::string(reinterpret_cast<const char*>(screen.getArray()), screen.arraySize());
}

std::string rng_of(ale::ALEInterface& ale) {
  ale::stella::Serializer out;
  ale.environment->getEnvironmentRNG().saveState(out);
  return out.get_str();
}

void copy_rng(ale::ALEInterface& from, ale::ALEInterface& to) {
  ale::stella::Deserializer in(rng_of(from));
  to.environment->getEnvironmentRNG().loadState(in);
}

}  // namespace sb3ale
