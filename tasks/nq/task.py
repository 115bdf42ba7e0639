"""Natural Questions behind the task contract: gzipped JSON lines in (original or simplified
format, a file or a glob), the official predictions JSON out, scored by the official scorer.

Google's ETC features, model and decoding (features.py, model.py, decode.py):
docs/official_layouts/nq.md; formats: docs/file_formats.md#natural-questions.
"""

from tasks.common import input_parts
from tasks.common.read_report import ReadReport
from tasks.common.task import Task
from tasks.nq import baselines, data, inference, metrics, model, records


class NqTask(Task):
  """A long answer (a candidate) and short answers per example, over windows of the page."""
  name, title = "nq", "Natural Questions"
  model_class = model.NqModel
  predictor_class = inference.Predictor
  headline_keys = metrics.MAIN_KEYS
  predict_batch_size = 8
  demo_sizes = (1500, 200)
  input_help = "NQ gzipped JSONL file or glob."
  prediction_help = "The official predictions JSON."
  gold_help = "NQ gzipped JSONL file or glob with annotations."
  flag_aliases = {"gold_file": "gold_path", "prediction_file": "predictions_path"}

  def input_files(self, path):
    return data.expand_paths(path)

  def training_texts(self, train_file):
    """Questions and text tokens of the training file (html tokens have their own markers)."""
    for example in data.iter_examples(train_file, with_labels=True,
                                      report=ReadReport(train_file)):
      yield example.question
      words = [t for t, html in zip(example.tokens, example.is_html) if not html]
      for begin in range(0, len(words), 64):
        yield " ".join(words[begin:begin + 64])

  def training_examples(self, input_path, report, part=input_parts.WHOLE):
    """Streams the file (or glob) one line at a time: NQ files do not fit in memory."""
    return data.iter_examples(input_path, with_labels=True, report=report, part=part)

  def labelled_features(self, examples, tokenizer, feature_config, report, counts, log):
    return records.training_windows(examples, tokenizer, feature_config, counts, log=log)

  def describe_prediction(self, prediction, examples):
    entries = prediction["predictions"]
    return (f"{len(entries)} prediction(s): "
            f"{sum(e['long_answer']['start_token'] >= 0 for e in entries)} with a long answer, "
            f"{sum(bool(e['short_answers']) for e in entries)} with short spans, "
            f"{sum(e['yes_no_answer'] != 'NONE' for e in entries)} yes/no, "
            f"{sum(bool(e.problem) for e in examples)} null because the example could not be "
            "converted")

  def baselines(self, examples):
    return {"always null": baselines.null_predictions(examples),
            "first paragraph": baselines.first_paragraph_predictions(examples)}


TASK = NqTask()
