"""What every task's `features:` section shares: the two input lengths, checks of its settings,
and the length of each stored feature from whether it belongs to the long or the global input."""

import dataclasses
from typing import Dict, Iterable

# Model features of the global input besides the ones named global_*.
GLOBAL_MODEL_FEATURES = ("ignore_hard_g2l_mask",)


def check_int_fields(config) -> None:
  """ValueError naming the first int field of a feature-config dataclass that is not a positive
  integer (a bool is not), checking those in its `zero_allowed` (0 switches them off) last:
  they must be 0 or more."""
  allowed = set(getattr(config, "zero_allowed", ()))
  names = [f.name for f in dataclasses.fields(config)
           if f.type in (int, "int") and f.name not in allowed]
  for name in names + sorted(allowed):
    value = getattr(config, name)
    minimum = 0 if name in allowed else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
      expected = "0 or a positive integer" if minimum == 0 else "a positive integer"
      raise ValueError(f"{name}: must be {expected}, got {value!r}")


def feature_lengths(config, names: Iterable[str], global_names: Iterable[str] = (),
                    scalar_names: Iterable[str] = ()) -> Dict[str, int]:
  """{feature: stored length}: 0 for a scalar, global_seq_len for a global_* feature (or one of
  `global_names` or GLOBAL_MODEL_FEATURES), long_seq_len for the rest."""
  global_names = set(global_names) | set(GLOBAL_MODEL_FEATURES)
  scalar_names = set(scalar_names)
  lengths = {}
  for name in names:
    if name in scalar_names:
      lengths[name] = 0
    elif name.startswith("global") or name in global_names:
      lengths[name] = config.global_seq_len
    else:
      lengths[name] = config.long_seq_len
  return lengths


# Every task writes the features Google's ETC converter writes; "package" was this project's
# second layout, removed (an old config naming it gets an error saying so).
OFFICIAL_LAYOUT, REMOVED_LAYOUT = "official", "package"


@dataclasses.dataclass
class FeatureConfig:
  """The input lengths every task has; a task's config subclasses it, adds its own fields and
  checks them in `check` (int fields must be positive, or 0 or more when listed in
  `zero_allowed`; bool fields true or false).

  `layout` is kept for configs written when there were two: only "official" (every feature
  Google's ETC converter writes, under its name and with its values) is accepted.
  """
  long_seq_len: int = 4096
  global_seq_len: int = 256
  layout: str = OFFICIAL_LAYOUT

  zero_allowed = ()   # names of int fields where 0 means "off" (a class attribute, not a field)

  def __post_init__(self):
    check_int_fields(self)
    if self.layout == REMOVED_LAYOUT:
      raise ValueError(f"layout: {self.layout!r} was removed for {type(self).__name__}: the task "
                       "has one layout, Google's features; delete the key (a model exported "
                       "with that layout must be trained again)")
    if self.layout != OFFICIAL_LAYOUT:
      raise ValueError(f"layout: {self.layout!r} is not {OFFICIAL_LAYOUT!r} "
                       f"for {type(self).__name__}")
    for field in dataclasses.fields(self):
      value = getattr(self, field.name)
      if field.type in (bool, "bool") and not isinstance(value, bool):
        raise ValueError(f"{field.name}: must be true or false, got {value!r}")
    self.check()

  def check(self) -> None:
    """The task's own consistency checks (ValueError naming the setting)."""

  def check_question_room(self, name: str, global_use: str, long_use: str) -> None:
    """ValueError unless `name` question pieces leave a global slot (besides CLS) and a long
    slot for the rest of the input."""
    pieces = getattr(self, name)
    if pieces + 1 >= self.global_seq_len:
      raise ValueError(f"{name}: {pieces} leaves no global slot for {global_use} in "
                       f"global_seq_len {self.global_seq_len}")
    if pieces >= self.long_seq_len:
      raise ValueError(f"{name}: {pieces} leaves no long slot for {long_use} in long_seq_len "
                       f"{self.long_seq_len}")
