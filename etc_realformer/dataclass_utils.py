"""Building config dataclasses from user mappings with errors that name the bad key."""

import dataclasses
from typing import Any, Mapping


def check_known_keys(cls, values: Mapping[str, Any], source: str, what: str) -> None:
  """Raises ValueError naming `source` and every key of `values` that `cls` has no field for."""
  names = {f.name for f in dataclasses.fields(cls)}
  unknown = sorted(set(values) - names)
  if unknown:
    raise ValueError(f"{source}: unknown {what} key(s) {unknown}; known: {sorted(names)}")
