"""What a run logs with 1, 2 mirrored or 2 Horovod replicas (run by tests/test_replica_metrics.py).

  python tests/metric_worker.py {single,mirrored} OUT_DIR
  TF_CONFIG=... python tests/metric_worker.py multi_worker_mirrored OUT_DIR   # one per worker
  horovodrun -np 2 -H localhost:2 --gloo python tests/metric_worker.py horovod OUT_DIR

Trains accumulation_fixtures.Regression (every example selected: a plain-mean loss) for 2 steps
of a global batch of 4 through the training loop and writes OUT_DIR/<mode>[<rank>].json with
the per-step logged values and the run's final metrics (what metrics.json holds).
"""

import json
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top
import tf_keras  # pylint: disable=g-import-not-at-top

import accumulation_fixtures as af  # pylint: disable=g-import-not-at-top
from etc_realformer.training import loop  # pylint: disable=g-import-not-at-top
from etc_realformer.training.distribution import Distribution  # pylint: disable=g-import-not-at-top


class Logged(tf_keras.callbacks.Callback):
  def __init__(self):
    super().__init__()
    self.steps = []

  def on_train_batch_end(self, batch, logs=None):
    self.steps.append({k: float(v) for k, v in (logs or {}).items()})


def run(mode, out_dir):
  if mode == "mirrored":
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu,
                                               [tf.config.LogicalDeviceConfiguration()] * 2)
    distribution = Distribution("mirrored",
                                devices=[d.name for d in tf.config.list_logical_devices("CPU")])
  else:
    distribution = Distribution("none" if mode == "single" else mode)
  data = af.regression_data()
  data["selected"] = np.ones_like(data["selected"])
  logged = Logged()
  config = loop.LoopConfig.from_dict(dict(batch_size=4, num_train_steps=2, warmup_steps=0,
                                          learning_rate=0.1, optimizer="adamw", log_every=1))
  _, metrics = loop.run_training_loop(af.build(af.Regression), af.in_memory(data, 4), config,
                                      os.path.join(out_dir, f"run-{mode}"), distribution,
                                      verbose=0, extra_callbacks=[logged])
  suffix = "" if mode in ("single", "mirrored") else str(distribution.worker_index)
  with open(os.path.join(out_dir, f"{mode}{suffix}.json"), "w") as f:
    json.dump({"steps": logged.steps, "metrics": metrics,
               "replicas": distribution.num_replicas}, f)


if __name__ == "__main__":
  run(sys.argv[1], sys.argv[2])
