"""``python -m sb3_ale_vec.bench``: see main.py."""

from sb3_ale_vec.bench.main import main

main()
