r"""Fine-tunes ETC-RealFormer on HotpotQA (distractor) with Keras model.fit, then exports it.

  python -m tasks.hotpotqa.finetune --config=configs/hotpotqa/tiny.yaml \
      --set train.train_file=hotpot_train_v1.1.json \
      --set train.dev_file=hotpot_dev_distractor_v1.json \
      --set train.init_checkpoint=runs/pretrain_tiny/final/encoder --output_dir=runs/hotpotqa

Writes checkpoints (a re-run resumes), <output_dir>/export (SavedModel for
`python -m tasks.hotpotqa.predict`) and, with a dev file, the dev predictions, the chosen
supporting-fact threshold and the official metrics. `--distribution=horovod` (under horovodrun),
`mirrored` or `multi_worker_mirrored` distribute training as for pretraining.
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.hotpotqa import run

cli.define_finetune_flags("hotpotqa", "train.json")


def main(argv):
  del argv
  cli.finetune_main(run)


if __name__ == "__main__":
  app.run(main)
