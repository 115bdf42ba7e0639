"""Atomic writes of the synthetic data files (JSON, JSON lines optionally gzipped, info files),
the five splits every generator writes (`DemoData`), the look-up of a preset's
settings (`preset_settings`), the generators' self-checks (`check`) and the one summary of counts
(`spread`) every generator's `length_statistics` reports.

Every file is written to a temporary file in its own folder and renamed over the target, so a
reader (or a run restarted after a crash) sees the old file or the complete new one, never a
half-written file. Output bytes depend on the records only (gzip headers carry no time or name).

Self-contained on purpose: `etc_realformer.io_utils` does the same, but importing anything from
that package loads TensorFlow, which writing these files does not need.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import statistics
import tempfile
from typing import (BinaryIO, Callable, Dict, Iterable, Iterator, Mapping, Optional, Sequence,
                    Tuple, TypeVar)

INFO_DUMP_ARGS = {"indent": 2, "sort_keys": True}
# The splits of every generator: training and dev items about the training lexicon's names,
# dev_unseen about names never seen in training, and the two held-out splits about unseen names
# written by template families held out of training.
SPLITS = ("train", "dev", "dev_unseen", "dev_unseen_templates", "test_unseen_templates")
SEEN_NAME_SPLITS = ("train", "dev")
HELD_OUT_FAMILY_SPLITS = ("dev_unseen_templates", "test_unseen_templates")
# (items, seed, names, families) of one split.
SplitSettings = Tuple[int, int, str, Tuple[str, ...]]
# gzip's usual level rather than Python's 9: a fifth of the time (the NQ demo's 1,400 pages took
# 44 s at level 9) for files about 7% larger.
COMPRESS_LEVEL = 6


@contextlib.contextmanager
def atomic_open(path: str) -> Iterator[BinaryIO]:
  """Yields a binary file that replaces `path` when the block ends without an error.

  Missing parent folders are created; on an error the temporary file is removed and `path` is
  left as it was.
  """
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}-", suffix=".tmp")
  try:
    with os.fdopen(fd, "wb") as f:
      yield f
      f.flush()
      os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise


def _write_lines(f: BinaryIO, records: Iterable) -> None:
  """One JSON object a line: UTF-8, non-ASCII letters kept, one write per record."""
  for record in records:
    f.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")


def write_json(path: str, payload, **dump_args) -> str:
  """Writes `payload` as one UTF-8 JSON document; returns `path`.

  Non-ASCII letters are written as they are unless `ensure_ascii=True` is passed; other
  `json.dumps` arguments (`indent`, `sort_keys`, ...) pass through.
  """
  dump_args.setdefault("ensure_ascii", False)
  with atomic_open(path) as f:
    f.write(json.dumps(payload, **dump_args).encode("utf-8"))
  return path


def write_info(path: str, info: Mapping) -> str:
  """Writes a small description of a dataset (indented, keys sorted); returns `path`."""
  return write_json(path, info, ensure_ascii=True, **INFO_DUMP_ARGS)


def write_jsonl(path: str, records: Iterable, compress: bool = False) -> str:
  """Writes one JSON object per line, gzip-compressed if `compress`; returns `path`.

  `records` may be a generator: it is consumed once, a record at a time.
  """
  with atomic_open(path) as raw:
    if compress:
      with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                         compresslevel=COMPRESS_LEVEL) as f:
        _write_lines(f, records)
    else:
      _write_lines(raw, records)
  return path


def is_current(info_path: str, info: Mapping, paths: Iterable[str]) -> bool:
  """Whether the info file holds exactly `info` and every one of `paths` exists."""
  try:
    with open(info_path, encoding="utf-8") as f:
      return json.load(f) == info and all(os.path.exists(p) for p in paths)
  except (OSError, ValueError):
    return False


def check_generator_arguments(num, split: str, splits, names: str, name_choices, families,
                              all_families, distinct: bool = False) -> tuple:
  """The argument checks every benchmark-style generator makes; returns `families` as a tuple.

  ValueError names the argument: `num` a non-negative int (not a bool), `split` one of `splits`,
  `names` one of `name_choices`, `families` a non-empty sequence (not a string) of names from
  `all_families` (and without repeats when `distinct`).
  """
  if isinstance(num, bool) or not isinstance(num, int) or num < 0:
    raise ValueError(f"num must be a non-negative integer, got {num!r}")
  if split not in splits:
    raise ValueError(f"split must be one of {tuple(splits)}, got {split!r}")
  if names not in name_choices:
    raise ValueError(f"names must be one of {tuple(name_choices)}, got {names!r}")
  if isinstance(families, str):
    raise ValueError(f"families must be a sequence of family names, got the string "
                     f"{families!r}")
  families = tuple(families)
  unknown = [f for f in families if f not in all_families]
  if not families or unknown or (distinct and len(set(families)) != len(families)):
    raise ValueError(f"families must be a non-empty sequence of distinct names from "
                     f"{tuple(all_families)}, got {families!r}"
                     + (f" (unknown families {unknown})" if unknown else ""))
  return families


class DemoData:
  """The five splits of one generator, written to a folder and reused while they are current.

  `generate(num, seed, split, names, families, preset)` returns a split's records and
  `write(path, records)` writes them. Every generator names its files (`filenames`, the same
  for every preset) and its info file; the info file records the generator and preset
  ("nq_short"), its version, the arguments and each split's file, seed, names and families, so
  a folder written with other arguments, another preset or an older version is rewritten.
  """

  def __init__(self, name: str, version: int, generate: Callable[..., Sequence],
               write: Callable[[str, Sequence], object], presets: Mapping,
               seed_offsets: Mapping[str, int], filenames: Mapping[str, str],
               info_filename: str):
    self.name, self.version, self.generate, self.write = name, version, generate, write
    self.presets, self.seed_offsets = presets, seed_offsets
    self.filenames, self.info_filename = filenames, info_filename

  def split_plan(self, num_train: int, num_dev: int, seed: int = 0, preset: str = "benchmark",
                 train_families: Optional[Sequence[str]] = None) -> Dict[str, SplitSettings]:
    """{split: (items, seed, names, families)} of the five splits, in SPLITS order.

    train: `num_train` items in `train_families` (None: the preset's); dev and dev_unseen:
    `num_dev` items in the preset's train families; the held-out splits: `num_dev` items in
    its held-out families. A split's seed is `seed + seed_offsets[split]`, so no two splits
    share an item. ValueError names a size that is not a positive integer or an unknown preset.
    """
    settings = preset_settings(self.presets, preset)
    for name, value in (("num_train", num_train), ("num_dev", num_dev)):
      if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    plan = {}
    for split in SPLITS:
      families = (settings.held_out_families if split in HELD_OUT_FAMILY_SPLITS else
                  train_families if split == "train" and train_families is not None else
                  settings.train_families)
      plan[split] = (num_train if split == "train" else num_dev, seed + self.seed_offsets[split],
                     "seen" if split in SEEN_NAME_SPLITS else "unseen", tuple(families))
    return plan

  def ensure(self, directory: str, num_train: int, num_dev: int, seed: int = 0,
             train_families: Optional[Sequence[str]] = None,
             preset: str = "benchmark") -> Dict[str, str]:
    """Writes the splits of `split_plan` to `directory`, then the info file (last, so an
    interrupted run leaves no info file that matches), unless the info file already holds these
    arguments and every split's file exists. Returns {split: path}.

    `train_families`: the families of the train split (None: the preset's; all families trains
    on the held-out ones too, the ablation that measures what holding them out costs).
    """
    plan = self.split_plan(num_train, num_dev, seed, preset, train_families)
    info = {"generator": f"{self.name}_{preset}", "generator_version": self.version,
            "num_train": num_train, "num_dev": num_dev, "seed": seed,
            "train_families": list(plan["train"][3]),
            "held_out_families": list(plan["dev_unseen_templates"][3]),
            "splits": {split: {"file": self.filenames[split], "seed": s[1], "names": s[2],
                               "families": list(s[3])} for split, s in plan.items()}}
    paths = {split: os.path.join(directory, self.filenames[split]) for split in plan}
    info_path = os.path.join(directory, self.info_filename)
    if not is_current(info_path, info, paths.values()):
      for split, (num, split_seed, names, families) in plan.items():
        self.write(paths[split], self.generate(num, split_seed, split, names, families, preset))
      write_info(info_path, info)
    return paths


def spread(name: str, values: Sequence[float]) -> Dict[str, float]:
  """`{name}_mean`, `_median`, `_p90` (nearest rank), `_min` and `_max` of `values`."""
  ordered = sorted(values)
  if not ordered:
    raise ValueError(f"length statistics need at least one record (no {name} to count)")
  p90 = ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]
  return {f"{name}_mean": statistics.fmean(ordered), f"{name}_median": statistics.median(ordered),
          f"{name}_p90": p90, f"{name}_min": ordered[0], f"{name}_max": ordered[-1]}


_Settings = TypeVar("_Settings")


def preset_settings(settings: Mapping[str, _Settings], name: str) -> _Settings:
  """The settings of preset `name`; a ValueError names the presets there are."""
  if name not in settings:
    raise ValueError(f"preset must be one of {tuple(settings)}, got {name!r}")
  return settings[name]


def check(condition: bool, message: str) -> None:
  """A generator's check of what it wrote: an assertion that stays on under `python -O`."""
  if not condition:
    raise AssertionError(message)
