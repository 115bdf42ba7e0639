"""Gradient accumulation under MirroredStrategy with 2 replicas (2 logical CPUs).

  python tests/accumulation_worker.py OUT_DIR

Trains accumulation_fixtures.Regression twice through the training loop: without a strategy
and without accumulation, and mirrored on 2 logical CPUs with 2 micro-batches per step (one
example per replica and micro-batch). Writes OUT_DIR/{single,mirrored}.npz with the weights.
A separate process because logical devices must be set before TensorFlow starts its devices.
"""

import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import accumulation_fixtures as af  # pylint: disable=g-import-not-at-top
from etc_realformer.training.distribution import Distribution  # pylint: disable=g-import-not-at-top


def main(out_dir):
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  devices = [d.name for d in tf.config.list_logical_devices("CPU")]
  mirrored = Distribution("mirrored", devices=devices)
  assert mirrored.num_replicas == 2, devices
  runs = {"single": (Distribution("none"), 1), "mirrored": (mirrored, 2)}
  for name, (distribution, steps) in runs.items():
    model = af.train_regression(os.path.join(out_dir, name), distribution,
                                gradient_accumulation_steps=steps)
    np.savez(os.path.join(out_dir, f"{name}.npz"),
             **{k.replace("/", "__"): v for k, v in af.weights(model).items()})


if __name__ == "__main__":
  main(sys.argv[1])
