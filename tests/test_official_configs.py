"""The official fine-tuning configs load through their task's parser and describe the released
architectures (the layout the official checkpoints need)."""

import importlib
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("task", ["hotpotqa", "wikihop", "nq", "openkp"])
@pytest.mark.parametrize("size, layers, hidden", [("etc_base", 12, 768), ("etc_large", 24, 1024)])
def test_official_task_configs_parse(task, size, layers, hidden):
  task_def = importlib.import_module(f"tasks.{task}.task").TASK
  config = task_def.load_run_config(os.path.join(ROOT, "configs", task, f"{size}.yaml"))
  model, features, train = task_def.parse_sections(config)
  assert (model.num_hidden_layers, model.hidden_size) == (layers, hidden)
  assert model.residual_attention == "none" and model.num_persistent_memory == 0
  assert not model.share_qkv_projections and not model.share_kv_projections
  assert features.long_seq_len == 4096 and train.init_checkpoint.endswith("model.ckpt")
  assert train.vocab_file == ""   # taken from the checkpoint folder
