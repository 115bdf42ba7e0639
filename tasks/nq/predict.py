r"""Writes the official NQ predictions JSON with an exported model.

  python -m tasks.nq.predict --export_dir=runs/nq/export \
      --input_file='v1.0/dev/nq-dev-*.jsonl.gz' --output_file=predictions.json

Every example of the input gets one entry (integer example_id as in the input, both scores),
also when its record cannot be converted: then a null answer, and its -inf scores are replaced
by the lowest finite score. Byte offsets come from document_tokens (-1 for simplified input).
"""

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks.nq.data import NqDataError
from tasks.nq.pipeline import predict_file

flags.DEFINE_string("export_dir", "runs/nq/export", "A model exported by finetune.")
flags.DEFINE_string("input_file", None, "NQ gzipped JSONL file or glob.")
flags.DEFINE_string("output_file", None, "Where the predictions JSON goes.")
flags.DEFINE_integer("batch_size", 8, "Windows per model call.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  if not FLAGS.input_file or not FLAGS.output_file:
    raise app.UsageError("--input_file and --output_file are required")
  try:
    predict_file(FLAGS.export_dir, FLAGS.input_file, FLAGS.output_file, FLAGS.batch_size)
  except (NqDataError, ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None


if __name__ == "__main__":
  app.run(main)
