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


@pytest.mark.parametrize("size", ["etc_base", "etc_large"])
def test_wikihop_official_configs_keep_googles_head(size):
  """run_wikihop.py --add_final_layer=True in the official runs; only the tiny demo drops it."""
  task_def = importlib.import_module("tasks.wikihop.task").TASK
  config = task_def.load_run_config(os.path.join(ROOT, "configs", "wikihop", f"{size}.yaml"))
  assert config["features"]["add_final_layer"] is True
  features = task_def.parse_sections(config)[1]
  assert features.add_final_layer and features.max_num_sentences == 200
  tiny = task_def.load_run_config(os.path.join(ROOT, "configs", "wikihop", "tiny.yaml"))
  assert task_def.parse_sections(tiny)[1].add_final_layer is False
  old = dict(config, features=dict(config["features"], max_query_pieces=16))
  with pytest.raises(ValueError, match="'max_query_pieces' was removed"):
    task_def.parse_sections(old)
