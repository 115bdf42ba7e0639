r"""Writes an OpenKP prediction file (JSONL {"url", "KeyPhrases"}) with an exported model.

  python -m tasks.openkp.predict --export_dir=runs/openkp/export \
      --input_file=OpenKPDev.jsonl --output_file=predictions.jsonl

One line per url of the input (a repeated url: its last record), each with the top 5 distinct
phrases as lists of words; a page without text gets an empty list and is reported.
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.openkp.pipeline import predict_file

cli.define_predict_flags("openkp", "Official-format OpenKP JSONL.", "Where the prediction JSONL goes.", 16)


def main(argv):
  del argv
  cli.predict_main(predict_file)


if __name__ == "__main__":
  app.run(main)
