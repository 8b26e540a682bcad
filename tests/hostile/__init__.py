"""The families of `tests/hostile_run.py`: fabricgen tried as a hostile user would try it.

Every case runs the installed `fabricgen` as a real process in a private temporary directory
with a private `FABRICGEN_CACHE_DIR`, and checks only what the documentation (docs/) says (exit codes,
located diagnostics, what is written and what is not), so it holds for any fabricgen that
keeps those promises.
"""
