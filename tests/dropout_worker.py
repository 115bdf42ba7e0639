"""Dropout across processes and replicas (run by tests/test_replay_dropout.py).

  horovodrun -np 2 -H localhost:2 --gloo python tests/dropout_worker.py horovod OUT_DIR
  python tests/dropout_worker.py mirrored OUT_DIR

horovod: every rank builds the same model (same TF seed, as the training loop does), tells the
dropout its rank (Distribution does this), checks that periods 1 and 2 give the gradients of
period 0 and writes OUT_DIR/horovod<rank>.npz with the worst relative difference and one
training-mode output. mirrored: 2 logical CPUs, one training-mode forward pass per replica on
the same inputs; writes OUT_DIR/mirrored.npz with each replica's output.
"""

import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top
import tf_keras  # pylint: disable=g-import-not-at-top

from test_model import features  # pylint: disable=g-import-not-at-top
from test_replay_dropout import (DROPOUT, loss_and_grads, same_weights_models,  # pylint: disable=g-import-not-at-top
                                 worst_relative_difference)
from etc_realformer import EtcModel  # pylint: disable=g-import-not-at-top
from etc_realformer.training.distribution import Distribution  # pylint: disable=g-import-not-at-top
from test_model import tiny  # pylint: disable=g-import-not-at-top


def horovod(out_dir):
  distribution = Distribution("horovod")
  rank = distribution.worker_index
  tf_keras.utils.set_random_seed(0)  # the same weights on every rank
  f = features(7)
  models = same_weights_models(f, (0, 1, 2), **DROPOUT)
  loss0, grads0 = loss_and_grads(models[0], f)
  worst = 0.0
  for model in models[1:]:
    loss, grads = loss_and_grads(model, f)
    assert abs(loss - loss0) <= 1e-6 * abs(loss0), (loss, loss0)
    worst = max(worst, worst_relative_difference(grads, grads0))
  tf.random.set_seed(9)  # the same step seed on every rank: only the rank tells them apart
  output = models[0](f, training=True)["long_output"].numpy()
  np.savez(os.path.join(out_dir, f"horovod{rank}.npz"), worst=worst, output=output)


def mirrored(out_dir):
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  devices = [d.name for d in tf.config.list_logical_devices("CPU")]
  distribution = Distribution("mirrored", devices=devices)
  f = {k: tf.constant(v) for k, v in features(7).items()}
  with distribution.scope():
    model = EtcModel(tiny(**DROPOUT))
    model(f)

  @tf.function
  def step():
    return distribution.strategy.run(lambda: model(f, training=True)["long_output"])

  per_replica = distribution.strategy.experimental_local_results(step())
  assert len(per_replica) == 2, per_replica
  np.savez(os.path.join(out_dir, "mirrored.npz"),
           **{f"replica{i}": t.numpy() for i, t in enumerate(per_replica)})


if __name__ == "__main__":
  {"horovod": horovod, "mirrored": mirrored}[sys.argv[1]](sys.argv[2])
