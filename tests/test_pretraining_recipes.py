"""The real-size pretraining recipes (configs/pretraining/etc_base.yaml and etc_large.yaml),
rehearsed on CPU as a user launches them: each config as shipped (LAMB, the warmup-and-decay
schedule, global-norm clipping, the MLM / CPC weights, residual attention, dropout 0.1,
mixed_bfloat16, gradient checkpointing, gradient accumulation) with only the sizes shrunk
through --set, on 2 Horovod ranks, launched by the documented command. ETC-large starts from a
BERT folder, lifted, as its recipe starts from RoBERTa's weights. Neither is killed and resumed
here: that does not depend on the recipe, and tests/test_pretraining_run.py checks that a run
started from a lifted BERT folder, SIGKILLed and started again, resumes from its checkpoint
(without lifting again) to the weights of an uninterrupted run (a killed launch here cost 45 s
of the suite; tests/test_multiworker_finetuning.py resumes a Horovod run)."""

import os
import sys

import numpy as np
import pytest

import launch_fixtures as lf
import pretrain_fixtures as fx
from etc_realformer.training import pretraining_run

STEPS = 4


def _shrunk(accumulation: int):
  """The --set overrides: sizes only (2 layers, 32 wide, the tiny shards' vocabulary), and a
  global batch of one row per micro-batch per rank at the shipped accumulation."""
  return {"model.num_hidden_layers": 2, "model.hidden_size": 32,
          "model.num_attention_heads": 2, "model.intermediate_size": 64,
          "model.local_radius": 4, "model.relative_pos_max_distance": 3,
          "model.relative_vocab_size": 10, "model.vocab_size": 1088,
          "train.batch_size": 2 * accumulation, "train.num_train_steps": STEPS,
          "train.warmup_steps": 1, "train.checkpoint_every": 2, "train.log_every": 1}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["etc_base", "etc_large"])
def test_recipe_on_two_horovod_ranks(recipe, tmp_path):
  config_path = os.path.join(lf.ROOT, "configs", "pretraining", f"{recipe}.yaml")
  shipped = pretraining_run.load_run_config(config_path)
  overrides = _shrunk(shipped["train"]["gradient_accumulation_steps"])
  bert = None
  if recipe == "etc_large":
    bert = fx.bert_folder(str(tmp_path / "bert"))
    overrides.update({"train.init_checkpoint": str(tmp_path / "bert"),
                      "model.vocab_size": len(bert)})  # the BERT's rows (its vocab's pieces)
  data_dir = fx.make_tiny_data(str(tmp_path))
  out = str(tmp_path / "run")
  flags = [f"--config={config_path}", f"--train_data={data_dir}", f"--output_dir={out}",
           "--verbose=0", *lf.set_flags(overrides)]

  # The documented command.
  argv = [lf.horovodrun(), "-np", "2", "-H", "localhost:2", "--gloo", sys.executable, "-m",
          "etc_realformer.pretrain", *flags, "--distribution=horovod"]
  result = lf.run(argv, timeout=900)
  metrics = lf.read_json(os.path.join(out, "final", "metrics.json"))
  assert metrics["start_step"] == 0 and metrics["final_step"] == STEPS, metrics
  resolved = lf.read_json(os.path.join(out, "run_config.json"))
  train, model = resolved["train"], resolved["model"]
  # What the rehearsal kept from the recipe as shipped.
  for key in ("optimizer", "learning_rate", "global_clipnorm", "mixed_precision",
              "gradient_accumulation_steps", "mlm_loss_weight", "cpc_loss_weight"):
    assert train[key] == shipped["train"][key], key
  assert model["residual_attention"] == "sum" and model["grad_checkpointing_period"] == 1
  assert model["hidden_dropout_prob"] == 0.1
  losses = lf.logged_losses(result.stdout + result.stderr)
  assert sorted(losses) == list(range(1, STEPS + 1)), losses
  assert all(np.isfinite(v) for v in losses.values())
  weights = lf.model_weights(lf.checkpoint_weights(os.path.join(out, "checkpoints")))
  assert weights and all(np.isfinite(w).all() for w in weights.values())
  if bert is not None:  # the run started from the lifted BERT
    fx.assert_trained_from_bert(weights, bert)
