r"""Fine-tunes ETC-RealFormer on WikiHop with Keras model.fit, then exports it.

  python -m tasks.wikihop.finetune --config=configs/wikihop/tiny.yaml \
      --set train.train_file=qangaroo_v1.1/wikihop/train.json \
      --set train.dev_file=qangaroo_v1.1/wikihop/dev.json --output_dir=runs/wikihop

Writes checkpoints (a re-run resumes), <output_dir>/export (SavedModel for
`python -m tasks.wikihop.predict`) and, with a dev file, the dev predictions and accuracy.
`--distribution=horovod` (under horovodrun), `mirrored` or `multi_worker_mirrored` distribute
training as for pretraining.
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.wikihop import run

cli.define_finetune_flags("wikihop", "train.json")


def main(argv):
  del argv
  cli.finetune_main(run)


if __name__ == "__main__":
  app.run(main)
