"""Generators of small data in the official benchmark formats, for demos and tests.

One module per benchmark (`hotpotqa`, `wikihop`, `nq`, `openkp`), built on a shared lexicon of
invented words (`lexicon`) and an atomic file writer (`writer`). Pure Python: nothing here loads
TensorFlow. This package is not installed with the library (setup.py packages only
`etc_realformer` and `tasks`); it is importable from the root of a checkout.
"""
