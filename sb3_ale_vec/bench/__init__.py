"""The side-by-side benchmark (``python -m sb3_ale_vec.bench``) and the soak test
(``python -m sb3_ale_vec.bench.soak``): tools, not part of the API."""
