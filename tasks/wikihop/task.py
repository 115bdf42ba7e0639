"""WikiHop (QAngaroo) behind the task contract: one JSON array of items in, {id: candidate} out.

One layout, Google's: the records (tasks.wikihop.records, features), the model and the decoding
are those of Google's ETC WikiHop code (docs/official_layouts/wikihop.md,
docs/file_formats.md#wikihop).
"""

from tasks.common import input_parts
from tasks.common.task import Task
from tasks.wikihop import baselines, data, inference, model, records


class WikiHopTask(Task):
  """The answer is one of the item's candidates (one global token each)."""
  name, title = "wikihop", "WikiHop"
  model_class = model.WikiHopModel
  predictor_class = inference.Predictor
  headline_keys = ("accuracy",)
  demo_sizes, demo_unit = (2000, 300), "items"
  prediction_help = "{id: candidate} JSON."

  def training_texts(self, train_file):
    for item in data.iter_items(train_file):
      if isinstance(item, dict):
        yield str(item.get("query", "")).replace("_", " ")
        yield from (c for c in item.get("candidates") or [] if isinstance(c, str))
        yield from (s for s in item.get("supports") or [] if isinstance(s, str))

  def training_examples(self, input_path, report, part=input_parts.WHOLE):
    """Streams the JSON array one item at a time."""
    return data.iter_training_examples(input_path, report, part)

  def labelled_features(self, examples, tokenizer, feature_config, report, counts, log):
    return records.training_features(examples, tokenizer, feature_config, counts, log=log,
                                     source=report.path, report=report)

  def parse_fn(self, feature_config):
    return records.parse_fn(feature_config)

  def build_model(self, model_config, feature_config):
    return self.model_class(model_config, add_final_layer=feature_config.add_final_layer,
                            name=self.name)

  def predict(self, predictor, examples, batch_size, source="", export_dir="", **options):
    try:
      return predictor.predict(examples, batch_size)
    except ValueError as e:   # features.DoesNotFit, a bad item
      raise type(e)(f"{source}: {e}" if source else str(e)) from None

  def baselines(self, examples):
    return {"most mentioned candidate": baselines.most_mentioned(examples)}

  def demo_scores(self, dev_file, prediction_file):
    """Also the expected accuracy of a random candidate."""
    examples, _ = data.read_examples(dev_file, with_labels=False)
    chance = sum(1 / len(e.candidates) for e in examples) / len(examples)
    return dict(super().demo_scores(dev_file, prediction_file), chance_accuracy=chance)

  def demo_report(self, summary):
    return (super().demo_report(summary) +
            f"\n\nrandom candidate: accuracy {summary['chance_accuracy']:.4f} (expected)")


TASK = WikiHopTask()
