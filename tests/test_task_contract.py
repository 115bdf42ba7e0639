"""Every task implements the one contract (tasks.common.task.Task) the same way, and the encoder
library knows nothing of tasks."""

import importlib
import os
import subprocess
import sys

import pytest

from etc_realformer.config import EtcConfig
from tasks.common import feature_config
from tasks.common.serving import TaskPredictor
from tasks.common.task import Task
from tasks.common.task_model import TaskModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = ("hotpotqa", "nq", "openkp", "wikihop")


MODULES = {"__init__.py", "__main__.py", "baselines.py", "data.py", "decode.py", "features.py",
           "inference.py", "metrics.py", "model.py", "records.py", "task.py"}


def test_every_task_folder_has_the_same_modules():
  # Reading (data), features, records, model, decoding, metrics and baselines apart, behind the
  # task; a task may add helpers of its own (WikiHop's sentences, NQ's TFDS reader). Every task
  # has one layout, Google's: no second converter, model or decoder (official*.py) remains.
  for name in TASKS:
    folder = {f for f in os.listdir(os.path.join(ROOT, "tasks", name)) if f.endswith(".py")}
    assert MODULES <= folder, (name, sorted(MODULES - folder))
    assert not any(f.startswith("official") for f in folder), name


@pytest.mark.parametrize("name", TASKS)
def test_each_task_implements_the_contract(name):
  task = importlib.import_module(f"tasks.{name}.task").TASK
  assert isinstance(task, Task) and task.name == name
  assert issubclass(task.model_class, TaskModel)
  assert issubclass(task.predictor_class, TaskPredictor)
  assert issubclass(task.feature_config_class, feature_config.FeatureConfig)
  assert task.predictor_class.input_features and task.predictor_class.output_names
  assert callable(task.metrics.evaluate) and callable(task.metrics.format_metrics)
  assert set(task.headline_keys) and os.path.exists(task.default_config())
  # The export signature covers what the predictor feeds the model.
  config = task.feature_config_class()
  assert set(task.export_inputs(config)) == set(task.predictor_class.input_features)


@pytest.mark.parametrize("name", TASKS)
def test_the_demo_config_is_the_pretrained_tiny_model_at_etc_lengths(name):
  # One demo config per task, configs/<task>/tiny.yaml: the shipped pretrained encoder (its
  # sizes are the pretraining config's) at 2,048 long tokens or more.
  task = importlib.import_module(f"tasks.{name}.task").TASK
  model, features, train = task.parse_sections(task.load_run_config(task.default_config()))
  assert task.default_config().endswith(os.path.join(name, "tiny.yaml"))
  assert features.long_seq_len >= 2048 and train.init_checkpoint.endswith("tiny_english")
  pretrained = EtcConfig.from_file(os.path.join(ROOT, "pretrained", "tiny_english",
                                                "etc_config.json")).to_dict()
  free = ("use_hard_g2l_mask", "use_hard_l2g_mask", "local_radius", "hidden_dropout_prob",
          "attention_probs_dropout_prob", "share_feed_forward_params")
  assert ({k: v for k, v in model.to_dict().items() if k not in free}
          == {k: v for k, v in pretrained.items() if k not in free})


def test_a_task_missing_part_of_the_contract_is_a_clear_error():
  class Half(Task):  # pylint: disable=abstract-method
    name = "half"

    def read_examples(self, path, with_labels):
      return [], None

    def training_texts(self, train_file):
      return []

    def labelled_features(self, *args):
      return []

    def feature_lengths(self, feature_config):
      return {}

    def baselines(self, examples):
      return {}

  with pytest.raises(TypeError, match="does not set title, model_class, predictor_class, metrics"):
    Half()


def test_the_encoder_library_does_not_import_tasks():
  for folder, _, files in os.walk(os.path.join(ROOT, "etc_realformer")):
    for file in files:
      if file.endswith(".py"):
        with open(os.path.join(folder, file), encoding="utf-8") as f:
          text = f.read()
        assert "from tasks" not in text and "import tasks" not in text, file
        assert "synthetic_data" not in text, file


def test_the_driver_names_an_unknown_command():
  result = subprocess.run([sys.executable, "-m", "tasks.openkp", "frobnicate"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
  assert result.returncode != 0
  assert "unknown command 'frobnicate'; expected one of finetune, predict" in result.stderr
  assert "Traceback" not in result.stderr
