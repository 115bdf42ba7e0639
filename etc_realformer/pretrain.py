r"""Pretrains an ETC-RealFormer encoder (MLM + CPC) with Keras model.fit.

  python -m etc_realformer.pretrain --config=configs/pretraining/tiny.yaml --output_dir=runs/tiny
  horovodrun -np 2 -H localhost:2 --gloo python -m etc_realformer.pretrain \
      --config=... --distribution=horovod
  TF_CONFIG='{"cluster": {"worker": ["host1:port", "host2:port"]}, "task": {"type": "worker",
      "index": 0}}' python -m etc_realformer.pretrain --config=... \
      --distribution=multi_worker_mirrored

With no `train.train_data` the embedded corpus is generated and converted first (no download).
With `--corpus` (or `train.corpus`) the examples are streamed from the corpus files instead,
tokenized and masked while training (no shards; docs/pretraining.md, "Streaming input").
Re-running the same command resumes from the latest checkpoint in --output_dir (model and
optimizer state, step counter and data position). `--set train.key=value` overrides one
setting (repeatable; `model.key=value` and `data.key=value` work too).
"""

import json
import os

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from etc_realformer.data import pretraining_data
from etc_realformer.data import pretraining_examples as pe
from etc_realformer.training import determinism
from etc_realformer.training import distribution as distribution_lib
from etc_realformer.training import pretraining_run
from etc_realformer.training import run_config as run_config_lib

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
flags.DEFINE_string("config", os.path.join(_ROOT, "configs", "pretraining", "tiny.yaml"),
                    "Pretraining config (YAML/JSON: model, model_overrides, data, train).")
flags.DEFINE_string("output_dir", "runs/pretrain_tiny", "Checkpoints, logs and the final encoder.")
flags.DEFINE_enum("distribution", "none", list(distribution_lib.CHOICES), "How to parallelise.")
flags.DEFINE_string("train_data", None, "Directory of shards + data_config.json (overrides "
                    "train.train_data).")
flags.DEFINE_string("corpus", None, "Corpus files or glob patterns, comma separated (plain text "
                    "or JSON Lines, .gz too): stream the examples from them (overrides "
                    "train.corpus; shapes from the config's data section).")
flags.DEFINE_string("tfds_data_dir", None, "With --corpus=tfds:<name>/<config>[:<split>]: the "
                    "TFDS data directory holding that prepared dataset (overrides "
                    "train.tfds_data_dir).")
flags.DEFINE_multi_string("set", [], "Override, e.g. --set train.num_train_steps=50.")
flags.DEFINE_integer("verbose", 1, "Keras progress: 0 silent, 1 progress bar, 2 one line.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  try:
    run_config = pretraining_run.load_run_config(FLAGS.config)
    run_config_lib.apply_overrides(run_config, FLAGS.set)
    if FLAGS.train_data:
      run_config["train"]["train_data"] = FLAGS.train_data
    if FLAGS.corpus:
      run_config["train"]["corpus"] = FLAGS.corpus
    if FLAGS.tfds_data_dir:
      run_config["train"]["tfds_data_dir"] = FLAGS.tfds_data_dir
    train = pretraining_run.TrainConfig.from_dict(run_config["train"], FLAGS.config)  # fail early
    if train.deterministic:
      determinism.enable()  # before TensorFlow's runtime starts
    distribution = distribution_lib.Distribution(FLAGS.distribution)
    if not run_config["train"].get("train_data") and not run_config["train"].get("corpus"):
      data_config = pe.PretrainingDataConfig.from_dict(run_config["data"], FLAGS.config)
      # Every worker converts its own copy (deterministic) so nothing waits on a shared disk.
      base = os.path.join(FLAGS.output_dir, f"data-worker{distribution.worker_index}")
      run_config["train"]["train_data"] = pretraining_data.ensure_embedded_data(
          base, data_config, log=logging.info)
    metrics = pretraining_run.run_pretraining(run_config, FLAGS.output_dir, distribution,
                                              verbose=FLAGS.verbose)
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  if distribution.is_chief:
    print(json.dumps(metrics, indent=2, sort_keys=True))


if __name__ == "__main__":
  app.run(main)
