r"""The HotpotQA demo, end to end on generated data (no download):

  python -m tasks.hotpotqa.demo [--output_dir=runs/hotpotqa_demo]

1. writes synthetic HotpotQA-format train/dev files (official distractor format);
2. fine-tunes a tiny ETC-RealFormer with model.fit (configs/hotpotqa/tiny.yaml), choosing the
   supporting-fact threshold on dev, and exports it as a SavedModel;
3. predicts the dev file with the exported model and writes the leaderboard prediction file;
4. scores it with the official metrics next to a trivial baseline.
Prints the time of each step; <output_dir>/demo_summary.json keeps every figure. Re-running
resumes training from the last checkpoint (a finished run is not trained again).
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.hotpotqa import metrics as metrics_lib
from tasks.hotpotqa.pipeline import run_demo

cli.define_demo_flags("hotpotqa", 3000, 300, "questions")


def report(summary):
  print("\nHotpotQA demo, synthetic dev set: fine-tuned model")
  print(metrics_lib.format_metrics(summary["dev_metrics"]))
  print("\nbaseline: always 'yes', first sentence of every paragraph")
  print(metrics_lib.format_metrics(summary["baseline_metrics"]))


def main(argv):
  del argv
  cli.demo_main(run_demo, report, lambda s: {"dev": s["dev_metrics"]})


if __name__ == "__main__":
  app.run(main)
