"""Building config dataclasses from user mappings with errors that name the bad key."""

import dataclasses
from typing import Any, Mapping


def check_known_keys(cls, values: Mapping[str, Any], source: str, what: str) -> None:
  """Raises ValueError naming `source` and every key of `values` that `cls` has no field for;
  a key in the class's `removed_keys` ({key: why}) is named with the reason it went."""
  names = {f.name for f in dataclasses.fields(cls)}
  removed = getattr(cls, "removed_keys", {})
  gone = sorted(set(values) & set(removed))
  if gone:
    raise ValueError(f"{source}: {what} key {gone[0]!r} was removed: {removed[gone[0]]}; "
                     "delete it")
  unknown = sorted(set(values) - names)
  if unknown:
    raise ValueError(f"{source}: unknown {what} key(s) {unknown}; known: {sorted(names)}")
