"""The demo's data (`--data_style`, a preset of the task's one generator): every task's
make_demo_data writes the five splits with either preset, the held-out-family ones included, and
its own reader takes them."""

import gzip
import importlib
import json

import pytest

from tasks.common import task as task_lib

TASKS = ("hotpotqa", "nq", "openkp", "wikihop")
SPLITS = ("train", "dev", "dev_unseen", "dev_unseen_templates", "test_unseen_templates")


@pytest.mark.parametrize("style", task_lib.DATA_STYLES)
@pytest.mark.parametrize("name", TASKS)
def test_demo_data_has_the_held_out_template_splits(name, style, tmp_path):
  task = importlib.import_module(f"tasks.{name}.task").TASK
  files = task.make_demo_data(str(tmp_path), 6, 3, seed=0, data_style=style)
  assert tuple(files) == SPLITS
  for split, path in files.items():
    examples, report = task.read_examples(path, with_labels=split == "train")
    assert len(examples) >= (6 if split == "train" else 3), (split, report)
  for split in SPLITS[1:]:
    assert split in task_lib.SPLIT_TITLES


def test_an_unknown_data_style_is_refused(tmp_path):
  task = importlib.import_module("tasks.wikihop.task").TASK
  with pytest.raises(ValueError, match="data_style 'long'"):
    task.make_demo_data(str(tmp_path), 2, 2, seed=0, data_style="long")
  # The short generator's old name says what replaced it.
  with pytest.raises(ValueError, match="preset 'short'"):
    task.make_demo_data(str(tmp_path), 2, 2, seed=0, data_style="demo")


def _records(path):
  opener = gzip.open if path.endswith(".gz") else open
  with opener(path, "rt", encoding="utf-8") as f:
    text = f.read()
  return json.loads(text) if path.endswith(".json") else [json.loads(l) for l in text.splitlines()]


@pytest.mark.parametrize("name", TASKS)
def test_training_on_every_family_changes_only_the_train_split(name, tmp_path):
  # demo --train_families=all: the ablation that trains on the held-out families too.
  task = importlib.import_module(f"tasks.{name}.task").TASK
  generator = importlib.import_module(f"synthetic_data.{name}")
  assert set(generator.HELD_OUT_FAMILIES) < set(generator.FAMILIES)
  default = task.make_demo_data(str(tmp_path / "default"), 10, 2, seed=3, data_style="benchmark")
  every = task.make_demo_data(str(tmp_path / "all"), 10, 2, seed=3, data_style="benchmark",
                              train_families="all")
  for split in SPLITS[1:]:
    assert _records(every[split]) == _records(default[split]), split
  # The train split is the generator's, from the same seed, over every family (the train
  # split's seed offset is 0 in every generator).
  expected = generator.generate_examples(10, 3, "train", "seen", generator.FAMILIES)
  assert _records(every["train"]) == json.loads(json.dumps(expected))
  assert _records(every["train"]) != _records(default["train"])
  with pytest.raises(ValueError, match="train_families 'some'"):
    task.make_demo_data(str(tmp_path / "x"), 2, 2, seed=0, data_style="benchmark",
                        train_families="some")
