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

import numpy as np  # pylint: disable=g-import-not-at-top
import pytest  # pylint: disable=g-import-not-at-top
import tf_keras  # pylint: disable=g-import-not-at-top


@pytest.fixture(autouse=True)
def _seed():
  tf_keras.utils.set_random_seed(1234)
  np.random.seed(1234)
  yield


def pytest_collection_modifyitems(config, items):
  """Files with a test marked slow run first (in collection order), so that with `-n 2 --dist
  loadfile` the long end-to-end files start early and the short ones fill in around them."""
  del config
  slow_files = {item.path for item in items if item.get_closest_marker("slow")}
  items.sort(key=lambda item: item.path not in slow_files)
