r"""Scores an NQ predictions JSON with the official scorer (the `natural-questions` package).

  python -m tasks.nq.evaluate --gold_path='v1.0/dev/nq-dev-*.jsonl.gz' \
      --predictions_path=predictions.json [--output_file=metrics.json]

The flags --gold_path and --predictions_path are the official scorer's own. Prints
long-best-threshold-f1 and short-best-threshold-f1 (with precision, recall and threshold), then
all the official metrics as JSON. Bad files are reported by name, not with a traceback.
"""

import json

from absl import app
from absl import flags

from etc_realformer.io_utils import atomic_write_json
from tasks.nq import metrics as metrics_lib   # defines the scorer's flags
from tasks.nq.data import NqDataError

flags.DEFINE_string("output_file", None, "Optional: also write the metrics here as JSON.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  if not FLAGS.gold_path or not FLAGS.predictions_path:
    raise app.UsageError("--gold_path and --predictions_path are required")
  try:
    scores = metrics_lib.evaluate(FLAGS.gold_path, FLAGS.predictions_path)
  except (NqDataError, ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  print(metrics_lib.format_metrics(scores))
  print(json.dumps(scores, sort_keys=True))
  if FLAGS.output_file:
    atomic_write_json(FLAGS.output_file, scores)


if __name__ == "__main__":
  app.run(main)
