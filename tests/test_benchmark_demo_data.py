"""The demo's benchmark-style data (`--data_style=benchmark`): every task's make_demo_data
writes the five splits, the held-out-family ones included, and its own reader takes them."""

import importlib

import pytest

from tasks.common import task as task_lib

TASKS = ("hotpotqa", "nq", "openkp", "wikihop")
SPLITS = ("train", "dev", "dev_unseen", "dev_unseen_templates", "test_unseen_templates")


@pytest.mark.parametrize("name", TASKS)
def test_benchmark_style_demo_data_has_the_held_out_template_splits(name, tmp_path):
  task = importlib.import_module(f"tasks.{name}.task").TASK
  files = task.make_demo_data(str(tmp_path), 6, 3, seed=0, data_style="benchmark")
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
