r"""Scores an OpenKP prediction file: P/R/F1 @1, @3, @5 as the leaderboard computes them.

  python -m tasks.openkp.evaluate --prediction_file=predictions.jsonl \
      --gold_file=OpenKPDev.jsonl [--skip_empty_references] [--output_file=metrics.json]

A reference page without key phrases is an error naming its url unless
--skip_empty_references; a url missing from the prediction scores 0 and is counted.
"""

from absl import app
from absl import flags

from tasks import cli
from tasks.openkp import metrics as metrics_lib

cli.define_evaluate_flags("JSONL of {url, KeyPhrases}.",
                          "Official-format OpenKP JSONL with KeyPhrases.")
flags.DEFINE_bool("skip_empty_references", False, "Leave out reference pages without phrases.")
FLAGS = cli.FLAGS


def main(argv):
  del argv
  cli.evaluate_main(lambda: metrics_lib.evaluate(FLAGS.gold_file, FLAGS.prediction_file,
                                                 FLAGS.skip_empty_references),
                    metrics_lib.format_metrics)


if __name__ == "__main__":
  app.run(main)
