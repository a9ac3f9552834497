#!/usr/bin/env bash
# Train PPO with rl-zoo3 through the native engine, then watch and record the agent.
# Usage: examples/rl_zoo_ppo.sh [ENV_ID] [extra rl_zoo3.train arguments...]
set -euo pipefail
env_id=${1:-PongNoFrameskip-v4}
shift || true
python -m rl_zoo3.train --algo ppo --env "$env_id" -conf sb3_ale_vec.zoo -f logs "$@"
python -m rl_zoo3.enjoy --algo ppo --env "$env_id" -f logs -n 1000 --no-render
python -m rl_zoo3.record_video --algo ppo --env "$env_id" -f logs -n 500
