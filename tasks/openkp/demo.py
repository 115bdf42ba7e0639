r"""The OpenKP demo, end to end on generated data (no download):

  python -m tasks.openkp.demo [--output_dir=runs/openkp_demo]

1. writes synthetic OpenKP files (pages with a navigation bar, headings, bold phrases and
   VDOM boxes with visual features);
2. fine-tunes a tiny ETC-RealFormer with model.fit (configs/openkp/tiny.yaml) and exports it;
3. predicts the dev file with the exported model (JSONL, top 5 phrases per url);
4. scores P/R/F1 @1,3,5 next to two baselines: the first five words and the most frequent
   n-grams.

<output_dir>/demo_summary.json keeps every figure. Re-running resumes training from the last
checkpoint (a finished run is not trained again).
"""

from absl import app

import etc_realformer  # pylint: disable=unused-import  (sets TF_USE_LEGACY_KERAS)
from tasks import cli
from tasks.openkp import metrics as metrics_lib
from tasks.openkp.pipeline import run_demo

cli.define_demo_flags("openkp", 1500, 200, "pages")


def report(summary):
  print("\nOpenKP demo, synthetic dev set: fine-tuned model")
  print(metrics_lib.format_metrics(summary["dev_metrics"]))
  for name, scores in summary["baseline_metrics"].items():
    print(f"\nbaseline: {name.replace('_', ' ')}")
    print(metrics_lib.format_metrics(scores))


def main(argv):
  del argv
  cli.demo_main(run_demo, report, lambda s: {
      "F1@3": s["dev_metrics"]["F1@3"],
      **{f"{name} F1@3": scores["F1@3"] for name, scores in s["baseline_metrics"].items()}})


if __name__ == "__main__":
  app.run(main)
