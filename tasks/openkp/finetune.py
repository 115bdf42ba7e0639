r"""Fine-tunes ETC-RealFormer on OpenKP with Keras model.fit, then exports it.

  python -m tasks.openkp.finetune --config=configs/openkp/tiny.yaml \
      --set train.train_file=OpenKPTrain.jsonl --set train.dev_file=OpenKPDev.jsonl \
      --output_dir=runs/openkp

Writes checkpoints (a re-run resumes), <output_dir>/export (SavedModel for
`python -m tasks.openkp.predict`) and, with a dev file, the dev predictions and P/R/F1@1,3,5.
`--distribution=horovod` (under horovodrun), `mirrored` or `multi_worker_mirrored` distribute
training as for pretraining.
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.openkp import run

cli.define_finetune_flags("openkp", "OpenKPTrain.jsonl")


def main(argv):
  del argv
  cli.finetune_main(run)


if __name__ == "__main__":
  app.run(main)
