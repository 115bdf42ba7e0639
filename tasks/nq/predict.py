r"""Writes the official NQ predictions JSON with an exported model.

  python -m tasks.nq.predict --export_dir=runs/nq/export \
      --input_file='v1.0/dev/nq-dev-*.jsonl.gz' --output_file=predictions.json

Every example of the input gets one entry (integer example_id as in the input, both scores),
also when its record cannot be converted: then a null answer, and its -inf scores are replaced
by the lowest finite score. Byte offsets come from document_tokens (-1 for simplified input).
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.nq.pipeline import predict_file

cli.define_predict_flags("nq", "NQ gzipped JSONL file or glob.", "Where the predictions JSON goes.", 8, "Windows per model call.")


def main(argv):
  del argv
  cli.predict_main(predict_file)


if __name__ == "__main__":
  app.run(main)
