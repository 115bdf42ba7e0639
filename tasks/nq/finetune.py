r"""Fine-tunes ETC-RealFormer on Natural Questions with Keras model.fit, then exports it.

  python -m tasks.nq.finetune --config=configs/nq/tiny.yaml \
      --set 'train.train_file=v1.0/train/nq-train-*.jsonl.gz' \
      --set 'train.dev_file=v1.0/dev/nq-dev-*.jsonl.gz' --output_dir=runs/nq

The training file may be the original or the simplified format. Writes checkpoints (a re-run
resumes), <output_dir>/export (SavedModel for `python -m tasks.nq.predict`) and, with a dev
file, the dev predictions and the official scorer's metrics. `--distribution=horovod` (under
horovodrun), `mirrored` or `multi_worker_mirrored` distribute training as for pretraining.
"""

import json
import os

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from etc_realformer.training import distribution as distribution_lib
from etc_realformer.training import run_config as run_config_lib
from tasks.nq import run
from tasks.nq.data import NqDataError

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
flags.DEFINE_string("config", os.path.join(_ROOT, "configs", "nq", "tiny.yaml"),
                    "Fine-tuning config (YAML/JSON: model, model_overrides, features, train).")
flags.DEFINE_string("output_dir", "runs/nq", "Checkpoints, logs, export, dev predictions.")
flags.DEFINE_enum("distribution", "none", list(distribution_lib.CHOICES), "How to parallelise.")
flags.DEFINE_multi_string("set", [], "Override, e.g. --set train.train_file=train.jsonl.gz.")
flags.DEFINE_integer("verbose", 2, "Keras progress: 0 silent, 1 progress bar, 2 one line.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  try:
    run_config = run.load_run_config(FLAGS.config)
    run_config_lib.apply_overrides(run_config, FLAGS.set)
    run.parse_sections(run_config, FLAGS.config)  # fail early on a bad setting
    distribution = distribution_lib.Distribution(FLAGS.distribution)
    metrics = run.run_finetuning(run_config, FLAGS.output_dir, distribution,
                                 verbose=FLAGS.verbose)
  except (NqDataError, ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  if distribution.is_chief:
    print(json.dumps(metrics, indent=2, sort_keys=True))


if __name__ == "__main__":
  app.run(main)
