r"""Writes a WikiHop prediction file {id: candidate} with an exported model.

  python -m tasks.wikihop.predict --export_dir=runs/wikihop/export \
      --input_file=qangaroo_v1.1/wikihop/dev.json --output_file=predictions.json

Every id of the input gets a candidate (lower-cased, stripped); an item without usable
candidates gets "" and is reported.
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.wikihop.pipeline import predict_file

cli.define_predict_flags("wikihop", "Official-format WikiHop JSON array.", "Where the prediction JSON goes.", 16)


def main(argv):
  del argv
  cli.predict_main(predict_file)


if __name__ == "__main__":
  app.run(main)
