r"""Scores a HotpotQA prediction file with the official rules (all twelve metrics).

  python -m tasks.hotpotqa.evaluate --prediction_file=pred.json \
      --gold_file=hotpot_dev_distractor_v1.json [--output_file=metrics.json]

Prints the metrics table and how many gold ids the prediction lacks (they score 0).
"""

import json

from absl import app
from absl import flags

from etc_realformer.io_utils import atomic_write_json
from tasks.hotpotqa import metrics as metrics_lib

flags.DEFINE_string("prediction_file", None, "{'answer': {...}, 'sp': {...}} JSON.")
flags.DEFINE_string("gold_file", None, "Official-format HotpotQA JSON array with labels.")
flags.DEFINE_string("output_file", None, "Optional: also write the metrics here as JSON.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  if not FLAGS.prediction_file or not FLAGS.gold_file:
    raise app.UsageError("--prediction_file and --gold_file are required")
  try:
    prediction = metrics_lib.load_json(FLAGS.prediction_file, "prediction")
    gold = metrics_lib.load_json(FLAGS.gold_file, "gold")
    scores = metrics_lib.evaluate(prediction, gold)
    missing = metrics_lib.missing_ids(prediction, gold)
  except (ValueError, FileNotFoundError) as e:
    raise app.UsageError(str(e)) from None
  print(metrics_lib.format_metrics(scores))
  print(f"{len(gold)} gold id(s); missing from the prediction: {len(missing['answer'])} answer(s), "
        f"{len(missing['sp'])} supporting-fact list(s)")
  print(json.dumps(scores, sort_keys=True))
  if FLAGS.output_file:
    atomic_write_json(FLAGS.output_file, scores)


if __name__ == "__main__":
  app.run(main)
