"""Test set-up: tf-keras as Keras 2, quiet TensorFlow logs, deterministic seeds."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import pytest  # pylint: disable=g-import-not-at-top
import tf_keras  # pylint: disable=g-import-not-at-top


@pytest.fixture(autouse=True)
def _seed():
  tf_keras.utils.set_random_seed(1234)
  np.random.seed(1234)
  yield
