"""Runs a tiny pretraining job from a JSON spec; used by the distributed and resume tests.

  python tests/pretrain_worker.py SPEC.json

Spec keys: run_config, output_dir, distribution, weights_out (a .npz path; "{rank}" is replaced
by this worker's index), kill_at_step (optional: SIGKILL this process right after that step,
once its checkpoint callback has run).
"""

import json
import os
import signal
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")

import numpy as np  # pylint: disable=g-import-not-at-top
import tf_keras  # pylint: disable=g-import-not-at-top

from etc_realformer.training import distribution as distribution_lib  # pylint: disable=g-import-not-at-top
from etc_realformer.training import pretraining_run  # pylint: disable=g-import-not-at-top


class KillAt(tf_keras.callbacks.Callback):

  def __init__(self, step):
    super().__init__()
    self.step = step

  def on_train_batch_end(self, batch, logs=None):
    if int(self.model.optimizer.iterations.numpy()) == self.step:
      os.kill(os.getpid(), signal.SIGKILL)


def main(spec_path):
  with open(spec_path) as f:
    spec = json.load(f)
  dist = distribution_lib.Distribution(spec.get("distribution", "none"))
  extra = [KillAt(spec["kill_at_step"])] if spec.get("kill_at_step") else []
  captured = {}

  class Capture(tf_keras.callbacks.Callback):

    def on_train_end(self, logs=None):
      captured["weights"] = {v.name: v.numpy() for v in self.model.trainable_variables}

  metrics = pretraining_run.run_pretraining(spec["run_config"], spec["output_dir"], dist,
                                            verbose=0, extra_callbacks=extra + [Capture()])
  out = spec["weights_out"].replace("{rank}", str(dist.worker_index))
  if "weights" in captured:  # (a run that was already finished trains nothing)
    np.savez(out, **{k.replace("/", "__"): v for k, v in captured["weights"].items()})
  with open(out + ".json", "w") as f:
    json.dump(metrics, f)


if __name__ == "__main__":
  main(sys.argv[1])
