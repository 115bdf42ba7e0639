r"""Scores a WikiHop prediction file: accuracy over the gold ids (missing ids count wrong).

  python -m tasks.wikihop.evaluate --prediction_file=predictions.json \
      --gold_file=qangaroo_v1.1/wikihop/dev.json [--output_file=metrics.json]
"""

from absl import app

from tasks import cli
from tasks.wikihop import metrics as metrics_lib

cli.define_evaluate_flags("{id: candidate} JSON.",
                          "Official-format WikiHop JSON array with answers.")
FLAGS = cli.FLAGS


def main(argv):
  del argv
  cli.evaluate_main(lambda: metrics_lib.evaluate(FLAGS.gold_file, FLAGS.prediction_file),
                    metrics_lib.format_metrics)


if __name__ == "__main__":
  app.run(main)
