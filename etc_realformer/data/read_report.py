"""A count of what a reader of task files kept, skipped and repaired, with the first messages.

Task readers never drop a record silently: a skipped record (training: it cannot be labelled) or
a repaired one (prediction: it is used as far as possible) is counted under its reason, and the
first MAX_MESSAGES messages are kept to show the user which file, record and field went wrong.
"""

import collections
import dataclasses
from typing import List

MAX_MESSAGES = 20


@dataclasses.dataclass
class ReadReport:
  """What was read, skipped (training) or repaired (prediction), per reason."""
  path: str = ""
  records: int = 0
  examples: int = 0
  skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
  repaired: collections.Counter = dataclasses.field(default_factory=collections.Counter)
  messages: List[str] = dataclasses.field(default_factory=list)

  def _note(self, counter, reason, message):
    counter[reason] += 1
    if len(self.messages) < MAX_MESSAGES:
      self.messages.append(message)

  def skip(self, reason: str, message: str) -> None:
    self._note(self.skipped, reason, message)

  def repair(self, reason: str, message: str) -> None:
    self._note(self.repaired, reason, message)

  def summary(self) -> str:
    lines = [f"{self.path}: {self.records} record(s), {self.examples} example(s) kept, "
             f"{sum(self.skipped.values())} skipped, {sum(self.repaired.values())} repaired"]
    for title, counter in (("skipped", self.skipped), ("repaired", self.repaired)):
      for reason, count in sorted(counter.items()):
        lines.append(f"  {title}: {count} x {reason}")
    if self.messages:
      lines.append(f"  first {len(self.messages)} message(s):")
      lines.extend(f"    {m}" for m in self.messages)
    return "\n".join(lines)
