r"""Fine-tunes ETC-RealFormer on Natural Questions with Keras model.fit, then exports it.

  python -m tasks.nq.finetune --config=configs/nq/tiny.yaml \
      --set 'train.train_file=v1.0/train/nq-train-*.jsonl.gz' \
      --set 'train.dev_file=v1.0/dev/nq-dev-*.jsonl.gz' --output_dir=runs/nq

The training file may be the original or the simplified format. Writes checkpoints (a re-run
resumes), <output_dir>/export (SavedModel for `python -m tasks.nq.predict`) and, with a dev
file, the dev predictions and the official scorer's metrics. `--distribution=horovod` (under
horovodrun), `mirrored` or `multi_worker_mirrored` distribute training as for pretraining.
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.nq import run

cli.define_finetune_flags("nq", "nq-train.jsonl.gz")


def main(argv):
  del argv
  cli.finetune_main(run)


if __name__ == "__main__":
  app.run(main)
