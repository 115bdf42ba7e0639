"""Test set-up: tf-keras as Keras 2, quiet TensorFlow logs, deterministic seeds."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
  # Under pytest-xdist every worker (and the processes it starts) gets its share of the cores:
  # two workers that each spin a thread pool over both cores of a 2-core machine train about 20%
  # slower than two that use one core each (measured on the HotpotQA demo's training step).
  _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
  for _name in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_name, _threads)

# train.deterministic (the demo configs) needs one inter-op thread, which TensorFlow takes only
# before its runtime starts (etc_realformer/training/determinism.py).
os.environ["TF_NUM_INTEROP_THREADS"] = "1"

import etc_realformer  # pylint: disable=g-import-not-at-top,unused-import  # its env defaults
import numpy as np  # pylint: disable=g-import-not-at-top
import pytest  # pylint: disable=g-import-not-at-top
import tf_keras  # pylint: disable=g-import-not-at-top


@pytest.fixture(autouse=True)
def _seed():
  tf_keras.utils.set_random_seed(1234)
  np.random.seed(1234)
  yield


# The longest test files, longest first (worker seconds measured from a fresh clone on a 2-core
# machine at about 100 GFLOP/s, one TensorFlow thread a worker: about 580, 535, 395, 250, 175,
# 170, 135, 120).
_LONGEST_FILES = ("test_wikihop_end_to_end.py", "test_nq_end_to_end.py",
                  "test_hotpotqa_end_to_end.py", "test_official_rehearsal.py",
                  "test_openkp_end_to_end.py", "test_pretraining_run.py",
                  "test_pretraining_recipes.py", "test_model.py")


def pytest_configure(config):
  """pytest-xdist (3.x) reorders the files of `--dist loadfile` by their number of tests, which
  started WikiHop's end-to-end file (4 tests, the longest) after 19 of the suite's 29 minutes;
  the order chosen below is kept instead."""
  if hasattr(config.option, "loadscopereorder"):
    config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
  """The longest files first (longest processing time first: with `-n 2 --dist loadfile` the
  short files fill in around them), then the other files holding slow tests, then the rest;
  each group in collection order."""
  del config
  slow_files = {item.path for item in items if item.get_closest_marker("slow")}

  def rank(item):
    if item.path.name in _LONGEST_FILES:
      return (0, _LONGEST_FILES.index(item.path.name))
    return (1 if item.path in slow_files else 2, 0)

  items.sort(key=rank)  # stable: collection order within a rank
