r"""Writes a HotpotQA prediction file ({"answer": ..., "sp": ...}) with an exported model.

  python -m tasks.hotpotqa.predict --export_dir=runs/hotpotqa/export \
      --input_file=hotpot_dev_distractor_v1.json --output_file=pred.json

Every `_id` of the input gets an answer and supporting facts, also when its record is partly
unusable (then a best-effort or empty answer; the repairs are counted and logged).
`--choose_threshold` (labelled input only) picks the supporting-fact threshold with the best
joint F1 on this file and stores it in the export for later predictions.
"""

from absl import app
from absl import flags
from absl import logging

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa.data import HotpotDataError
from tasks.hotpotqa.pipeline import predict_file

flags.DEFINE_string("export_dir", "runs/hotpotqa/export", "A model exported by finetune.")
flags.DEFINE_string("input_file", None, "Official-format HotpotQA JSON array.")
flags.DEFINE_string("output_file", None, "Where the prediction JSON goes.")
flags.DEFINE_integer("batch_size", 8, "Examples per model call.")
flags.DEFINE_float("threshold", None, "Supporting-fact threshold (default: the export's).")
flags.DEFINE_bool("choose_threshold", False, "Choose the threshold on this (labelled) file.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  if not FLAGS.input_file or not FLAGS.output_file:
    raise app.UsageError("--input_file and --output_file are required")
  try:
    predict_file(FLAGS.export_dir, FLAGS.input_file, FLAGS.output_file, FLAGS.batch_size,
                 FLAGS.threshold, FLAGS.choose_threshold)
    if FLAGS.choose_threshold:
      print(metrics_lib.format_metrics(metrics_lib.evaluate_files(FLAGS.output_file,
                                                                  FLAGS.input_file)))
  except (HotpotDataError, ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None


if __name__ == "__main__":
  app.run(main)
