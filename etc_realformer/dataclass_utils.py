"""Building config dataclasses from user mappings with errors that name the bad key."""

import dataclasses
from typing import Any, Mapping


def check_known_keys(cls, values: Mapping[str, Any], source: str, what: str) -> None:
  """Raises ValueError naming `source` and every key of `values` that `cls` has no field for
  (a key in the class's `removed_keys` gets the reason it was removed instead)."""
  names = {f.name for f in dataclasses.fields(cls)}
  unknown = sorted(set(values) - names)
  removed = getattr(cls, "removed_keys", {})   # {key a release removed: what to do instead}
  gone = [name for name in unknown if name in removed]
  if gone:
    raise ValueError(f"{source}: {what} key {gone[0]!r}: {removed[gone[0]]}")
  if unknown:
    raise ValueError(f"{source}: unknown {what} key(s) {unknown}; known: {sorted(names)}")
