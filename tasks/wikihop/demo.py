r"""The WikiHop demo, end to end on generated data (no download):

  python -m tasks.wikihop.demo [--output_dir=runs/wikihop_demo]

1. writes synthetic WikiHop files (an invented world, "relation subject" queries, 2 to 40
   candidates, supports as documents);
2. fine-tunes a tiny ETC-RealFormer with model.fit (configs/wikihop/tiny.yaml) and exports it;
3. predicts the dev file with the exported model ({id: candidate});
4. scores its accuracy next to the "most mentioned candidate" baseline.

<output_dir>/demo_summary.json keeps every figure. Re-running resumes training from the last
checkpoint (a finished run is not trained again).
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.wikihop import metrics as metrics_lib
from tasks.wikihop.pipeline import run_demo

cli.define_demo_flags("wikihop", 2000, 300, "items")


def report(summary):
  print("\nWikiHop demo, synthetic dev set")
  print("  fine-tuned model:         " + metrics_lib.format_metrics(summary["dev_metrics"]))
  print("  most mentioned candidate: " + metrics_lib.format_metrics(summary["baseline_metrics"]))
  print(f"  random candidate:         accuracy {summary['chance_accuracy']:.4f} (expected)")


def main(argv):
  del argv
  cli.demo_main(run_demo, report, lambda s: {
      "accuracy": s["dev_metrics"]["accuracy"],
      "baseline_accuracy": s["baseline_metrics"]["accuracy"]})


if __name__ == "__main__":
  app.run(main)
