"""Peak memory of one fine-tuning step per example: the input to the GPU plan (docs/gpu_training.md).

One training step (forward + backward + AdamW update, dropout 0.1) of the HotpotQA model (the
encoder plus its three small heads) on the released ETC architectures
(configs/models/etc_base_official.yaml, etc_large_official.yaml) at L = 4096 long and G = 256
global tokens (configs/hotpotqa/etc_*.yaml), on generated HotpotQA features in Google's ETC
layout (question, ten paragraphs of twenty sentences), for batch 1 and 2 and
grad_checkpointing_period 0 and 1, float32 or a mixed-precision policy (--mixed_precision; the
activation bytes a GPU would hold, and fast enough on a CPU with float16 instructions). The
step is the compiled train function `fit` calls, with the optimizer slots built first, as the
training loop does.

--model_kind pretraining measures the pretraining step instead, which is what a GPU pretraining
run holds: etc_realformer.models.pretraining.EtcPretrainingModel (the encoder, the tied MLM head
and the CPC head; MLM 0.8 + CPC 0.2, cpc_group_size 0, as training/pretraining_run.py builds it)
with LAMB (the recipe's optimizer, learning rate 1e-4, weight decay 0.01; its two slots built
first, and loss scaling under mixed_float16, as training/loop.py does). Its batch has
PretrainingDataConfig's shapes at --long_len / --global_len (max_predictions_per_seq 640,
max_cpc_per_seq 32, cpc_sentence_len 32) with the keys and dtypes tfrecords.parse_batch gives
the train step, and is made by the real example builder (pretraining_examples.create_examples:
packing, CPC hiding, whole-word MLM) from generated documents of 4 to 16 sentences of 16 to 20
random pieces: at 4096 / 256 a row holds about 4,009 pieces in 222 sentences (one global token
each), 22 hidden for CPC and about 541 MLM targets (15% of the pieces outside the hidden
sentences) of the 640 slots (each row's `batch_fill`). The step also encodes each CPC slot's
sentence alone (32 x 32 long tokens per example, packed into one row); its FLOPs and the MLM
head's are counted. --residual_attention sets RealFormer's scores on the model config for
either kind (default none, the official configs' value; the pretraining recipe uses sum).

Each configuration runs in its own process; its peak resident memory (ru_maxrss) is its own.
  built MB    resident memory once weights, optimizer slots (AdamW, or LAMB for pretraining:
              two per weight either way) and the batch exist (before any step)
  peak MB     the process's peak after the steps
  step MB     peak - built: what the step itself adds (activations, gradients, temporaries)
  TF built    bytes held by TensorFlow's allocator once built (weights, slots, batch)
  TF step     the allocator's peak during the steps: every tensor alive at the worst moment,
              without the Python/runtime memory and the malloc slack that RSS also counts
              (on a machine with a GPU the model runs there and these are the GPU's figures)
The per-example figures are the differences between batch 2 and batch 1 at the same setting.
Where the full depth does not fit the machine (ETC-large needs more than 17 GB here), the depth
scan (--layers 1,2) measures the same model with 1 and 2 layers; --plan turns the saved results
into per-example figures at full depth (calibrated on ETC-base, which is measured at full
depth too) and a table of micro-batches per GPU (results/gpu_plan.json).
A configuration whose resident memory passes --max_rss_mb, or that leaves the machine with less
than --min_available_mb available, is stopped (the run must not push a shared machine into the
OOM killer) and reported as cut. FLOPs per example come from the analytic counter
(etc_realformer.flops): `model` counts forward + backward (3x forward), `executed` adds the
forward pass that gradient checkpointing runs again in the backward pass.

The saved results (2 CPU cores shared with other jobs; times are wall-clock on that machine):
  python benchmarks/memory_per_example.py --timeout 2400                       # 35 min
  python benchmarks/memory_per_example.py --layers 1,2 --large_periods 1,0 \
      --output benchmarks/results/memory_per_layer.json                       # 12 min
  python benchmarks/memory_per_example.py --mixed_precision mixed_float16 --large_periods 1,0 \
      --output benchmarks/results/memory_per_example_mixed_float16.json       # 18 min
  python benchmarks/memory_per_example.py --mixed_precision mixed_float16 --layers 1,2 \
      --large_periods 1,0 --output benchmarks/results/memory_per_layer_mixed_float16.json  # 8 min
  python benchmarks/memory_per_example.py --models base --global_len 512 \
      --mixed_precision mixed_float16 \
      --output benchmarks/results/memory_per_example_mixed_float16_g512.json  # OpenKP's G
  python benchmarks/memory_per_example.py --model_kind pretraining --residual_attention sum \
      --models base --periods 1 --mixed_precision mixed_float16 --timeout 1500 \
      --output benchmarks/results/memory_per_example_pretraining_mixed_float16.json  # 18 min
  python benchmarks/memory_per_example.py --model_kind pretraining --residual_attention none \
      --models base --periods 1 --mixed_precision mixed_float16 --timeout 1500 \
      --output benchmarks/results/memory_per_example_pretraining_none_mixed_float16.json  # 12 min
  python benchmarks/memory_per_example.py --model_kind pretraining --residual_attention sum \
      --models large --layers 1,2 --large_periods 1 --mixed_precision mixed_float16 \
      --timeout 600 \
      --output benchmarks/results/memory_per_example_pretraining_large_layers_mixed_float16.json
                                                                              # 5 min
  python benchmarks/memory_per_example.py --plan                # the per-GPU table, seconds
  python benchmarks/memory_per_example.py --models base --periods 1 --batches 1   # a quick look
Each prints a table and writes its JSON (default benchmarks/results/memory_per_example.json).
"""

import argparse
import dataclasses
import json
import os
import platform
import resource
import subprocess
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_CONFIGS = {"base": "etc_base_official.yaml", "large": "etc_large_official.yaml"}
NUM_PARAGRAPHS, SENTENCES_PER_PARAGRAPH, QUESTION_PIECES = 10, 20, 31


MODEL_KINDS = ("hotpotqa", "pretraining")


def _config(model, period, residual_attention="none"):
  from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
  config = EtcConfig.from_file(os.path.join(_ROOT, "configs", "models", MODEL_CONFIGS[model]))
  return config.replace(grad_checkpointing_period=period, residual_attention=residual_attention)


def _status_mb(path, key):
  """A 'Key:  N kB' line of a /proc status file, in MB (0 if unreadable)."""
  try:
    with open(path) as f:
      for line in f:
        if line.startswith(key + ":"):
          return int(line.split()[1]) / 1024
  except OSError:
    pass
  return 0.0


def _rss_mb():
  """Current resident memory of this process (VmRSS), MB."""
  return _status_mb("/proc/self/status", "VmRSS")


def hotpot_batch(vocab_size, long_len, global_len, batch, seed=0):
  """A batch of generated HotpotQA features in Google's ETC layout (tasks/hotpotqa/features.py),
  as numpy int32 arrays: the model's eight inputs (features.MODEL_INPUTS) and the labels
  (features.LABELS).

  Global: [CLS], one token per question piece, then per paragraph a PARAGRAPH token, a title
  token and one token per sentence, as long as a whole paragraph still fits in global_len.
  Long: [CLS], the question pieces, then per paragraph its title and sentences, each of the same
  number of random pieces, sized so that NUM_PARAGRAPHS paragraphs fill the long input (a few
  padding positions remain at the end). Every piece is owned by its question, title or sentence
  token (long_sentence_ids) and, inside a paragraph, points at its PARAGRAPH token
  (long_paragraph_ids); the long [CLS] has the sentence type and neither (-1). Breakpoints
  close [CLS], the question and each paragraph. Padding as Google's converter writes it: ids,
  types and breakpoints 0, sentence and paragraph ids -1. Every example has the same layout;
  only the piece ids differ. Labels: the first two sentences of the first paragraph are
  supporting (so are that paragraph's PARAGRAPH and title tokens); the answer (type 0, span)
  is up to three pieces inside the first sentence."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
  from tasks.hotpotqa import features as fl  # pylint: disable=g-import-not-at-top
  ids = fl.WORDPIECE_GLOBAL_IDS
  rng = np.random.default_rng(seed)
  long = {k: np.full(long_len, pad, np.int32) for k, pad in fl.LONG_PADDING.items()
          if k in fl.MODEL_INPUTS}
  glob = {k: np.full(global_len, pad, np.int32) for k, pad in fl.GLOBAL_PADDING.items()
          if k in fl.MODEL_INPUTS + ("supporting_facts",)}

  def add_global(g, token_id):
    glob["global_token_ids"][g] = token_id
    glob["global_token_type_ids"][g] = fl.GLOBAL_TYPE

  def add_long(pos, n, type_id, owner, paragraph):
    long["long_token_type_ids"][pos:pos + n] = type_id
    long["long_sentence_ids"][pos:pos + n] = owner
    long["long_paragraph_ids"][pos:pos + n] = paragraph

  def breakpoint_after(pos, g):   # the segment ends on long pos - 1 and global g - 1
    long["long_paragraph_breakpoints"][pos - 1] = 1
    glob["global_paragraph_breakpoints"][g - 1] = 1

  add_global(0, ids.cls)                           # [CLS]: no owner, no paragraph
  add_long(0, 1, fl.SENTENCE_TYPE, -1, -1)
  breakpoint_after(1, 1)
  for i in range(1, QUESTION_PIECES + 1):          # question piece i, owned by global token i
    add_global(i, ids.question)
    add_long(i, 1, fl.QUESTION_TYPE, i, -1)
  pos = g = 1 + QUESTION_PIECES
  breakpoint_after(pos, g)
  piece_len = (long_len - pos) // NUM_PARAGRAPHS // (SENTENCES_PER_PARAGRAPH + 1)
  paragraphs = []   # (PARAGRAPH token, title token, sentence tokens, first sentence's start)
  for _ in range(NUM_PARAGRAPHS):
    if piece_len < 1 or g + 2 + SENTENCES_PER_PARAGRAPH > global_len:
      break
    paragraph, title = g, g + 1
    add_global(paragraph, ids.paragraph)
    add_global(title, ids.sentence)                # titles take the sentence id too
    add_long(pos, piece_len, fl.TITLE_TYPE, title, paragraph)
    pos, g = pos + piece_len, g + 2
    sentences, first = [], pos
    for _ in range(SENTENCES_PER_PARAGRAPH):
      add_global(g, ids.sentence)
      add_long(pos, piece_len, fl.SENTENCE_TYPE, g, paragraph)
      sentences.append(g)
      pos, g = pos + piece_len, g + 1
    breakpoint_after(pos, g)
    paragraphs.append((paragraph, title, sentences, first))
  if not paragraphs:
    raise ValueError(f"no paragraph of {SENTENCES_PER_PARAGRAPH} sentences fits in "
                     f"long_len={long_len}, global_len={global_len}")
  token_ids = rng.integers(1000, vocab_size, (batch, long_len)).astype(np.int32)
  token_ids[:, 0] = ids.cls
  token_ids[:, pos:] = fl.LONG_PADDING["long_token_ids"]
  features = {"long_token_ids": token_ids}
  for name, row in list(long.items()) + list(glob.items()):
    if name != "long_token_ids":
      features[name] = np.repeat(row[None], batch, 0)
  paragraph, title, sentences, first = paragraphs[0]
  features["supporting_facts"][:, [paragraph, title] + sentences[:2]] = 1
  begin = first + min(3, piece_len - 1)            # inside the first paragraph's 1st sentence
  end = min(begin + 2, first + piece_len - 1)
  features.update(answer_types=np.full(batch, fl.ANSWER_TYPES["span"], np.int32),
                  answer_begins=np.full(batch, begin, np.int32),
                  answer_ends=np.full(batch, end, np.int32))
  return features


def _data_config(long_len, global_len):
  """The pretraining data shapes: PretrainingDataConfig's defaults at these lengths."""
  from etc_realformer.data import pretraining_examples as pe  # pylint: disable=g-import-not-at-top
  return pe.PretrainingDataConfig(long_seq_len=long_len, global_seq_len=global_len)


def pretraining_batch(vocab_size, long_len, global_len, batch, seed=0):
  """A batch of pretraining features (data/pretraining_examples.py) as the model's train_step
  receives them from tfrecords.make_dataset (parse_batch): int32 arrays, the two weights
  float32, cpc_sentence_token_ids [batch, max_cpc_per_seq, cpc_sentence_len].

  Made by the real example builder (pe.create_examples: packing, CPC hiding, whole-word MLM)
  from generated documents of 4 to 16 sentences, each of 16 to 20 random pieces in words of 1
  to 3 pieces, so that sentence ids, breakpoints, MLM positions and CPC slots are filled as in
  real data: at L = 4096, G = 256 a row holds about 4,000 pieces in 222 sentences (one global
  token each), 22 of them hidden for CPC (cpc_prob 0.1) and about 541 MLM targets (15% of the
  pieces outside the hidden sentences) of the 640 slots."""
  import itertools  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from etc_realformer.data import pretraining_examples as pe  # pylint: disable=g-import-not-at-top
  config = _data_config(long_len, global_len)
  rng = np.random.default_rng(seed)

  def sentence():
    sizes, left = [], int(rng.integers(16, 21))
    while left:
      sizes.append(min(left, int(rng.choice([1, 1, 1, 2, 2, 3]))))
      left -= sizes[-1]
    return [rng.integers(1000, vocab_size, n).tolist() for n in sizes]

  def documents():
    while True:
      yield [sentence() for _ in range(int(rng.integers(4, 17)))]

  examples = list(itertools.islice(pe.create_examples(documents(), config, vocab_size, seed),
                                   batch))
  out = {}
  for name in pe.feature_lengths(config):
    value = np.stack([e[name] for e in examples])
    out[name] = value.astype(np.float32 if name in pe.FLOAT_FEATURES else np.int32)
  out["cpc_sentence_token_ids"] = out["cpc_sentence_token_ids"].reshape(
      batch, config.max_cpc_per_seq, config.cpc_sentence_len)
  return out


def _batch_fill(features):
  """How much of a pretraining batch is used, per example (means): what the step computes on."""
  rows = features["token_ids"].shape[0]
  return {"long_tokens": float((features["token_ids"] != 0).sum() / rows),
          "global_tokens": float((features["global_token_ids"] != 0).sum() / rows),
          "mlm_positions": float(features["masked_lm_weights"].sum() / rows),
          "cpc_sentences": float(features["cpc_weights"].sum() / rows)}


def _kind(kind, config, long_len, global_len, batch):
  """The model of one kind, its optimizer (name, learning rate: the recipe's), the batch (numpy)
  and the analytic forward FLOPs per example."""
  from etc_realformer import flops  # pylint: disable=g-import-not-at-top
  forward = flops.encoder_flops(config, long_len, global_len)["forward"]
  if kind == "hotpotqa":
    from tasks.hotpotqa.model import HotpotQaModel  # pylint: disable=g-import-not-at-top
    return (HotpotQaModel(config, name="hotpotqa"), ("adamw", 5e-5),
            hotpot_batch(config.vocab_size, long_len, global_len, batch), forward)
  from etc_realformer.models.pretraining import EtcPretrainingModel  # pylint: disable=g-import-not-at-top
  data = _data_config(long_len, global_len)
  # As training/pretraining_run.py builds it (TrainConfig defaults) and trains it (LoopConfig:
  # LAMB, peak learning rate 1e-4, weight decay 0.01). The step also encodes every CPC slot's
  # sentence on its own (max_cpc_per_seq x cpc_sentence_len long tokens and max_cpc_per_seq
  # global tokens per example, packed into one row) and runs the MLM head on every prediction
  # slot: both are counted.
  model = EtcPretrainingModel(config, mlm_loss_weight=0.8, cpc_loss_weight=0.2,
                              cpc_group_size=0, name="pretraining")
  forward += (flops.encoder_flops(config, data.max_cpc_per_seq * data.cpc_sentence_len,
                                  data.max_cpc_per_seq)["forward"]
              + flops.mlm_head_flops(config, data.max_predictions_per_seq))
  return (model, ("lamb", 1e-4),
          pretraining_batch(config.vocab_size, long_len, global_len, batch), forward)


def _one(model_name, long_len, global_len, batch, period, layers, steps, precision="",
         kind="hotpotqa", residual_attention="none"):
  """Measures one configuration in this process (layers 0: the config's depth; precision "" or
  a Keras mixed-precision policy, with loss scaling as the training loop does; kind one of
  MODEL_KINDS); -> a dict."""
  os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
  sys.path.insert(0, _ROOT)
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from etc_realformer.training.optimizers import create_optimizer  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top

  config = _config(model_name, period, residual_attention)
  full_layers = config.num_hidden_layers
  if layers:
    config = config.replace(num_hidden_layers=layers)
  start = time.perf_counter()
  if precision:
    tf_keras.mixed_precision.set_global_policy(precision)
  model, (optimizer_name, learning_rate), batch_arrays, forward = _kind(
      kind, config, long_len, global_len, batch)
  model.build()
  optimizer = create_optimizer(optimizer_name, learning_rate)
  if precision == "mixed_float16":
    optimizer = tf_keras.mixed_precision.LossScaleOptimizer(optimizer)
  optimizer.build(model.trainable_variables)   # the optimizer slots exist before the first step
  model.compile(optimizer=optimizer)
  features = {k: tf.constant(v) for k, v in batch_arrays.items()}
  batches = iter(tf.data.Dataset.from_tensors(features).repeat())
  train_function = model.make_train_function()
  build_seconds = time.perf_counter() - start
  built_rss = _rss_mb()
  # TensorFlow's own allocator figures (what a GPU's allocator would also count): the tensors
  # alive once built, then the peak of the steps alone. On a machine with a GPU the model runs
  # there and these are the GPU's figures (RSS is then only the host side).
  device = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"
  tf_built = tf.config.experimental.get_memory_info(device)["current"] / 2 ** 20
  tf.config.experimental.reset_memory_stats(device)
  times, losses = [], []
  for _ in range(steps):
    start = time.perf_counter()
    losses.append(float(train_function(batches)["loss"]))
    times.append(time.perf_counter() - start)
  tf_peak = tf.config.experimental.get_memory_info(device)["peak"] / 2 ** 20
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
  checkpointed = 4 if config.grad_checkpointing_period else 3
  row = {"model": model_name, "batch": batch, "grad_checkpointing_period": period,
         "layers": config.num_hidden_layers, "full_layers": full_layers,
         "precision": precision or "float32", "device": device,
         "long_len": long_len, "global_len": global_len,
         "parameters": int(model.count_params()),
         "built_rss_mb": built_rss, "peak_rss_mb": peak, "step_mb": max(peak - built_rss, 0.0),
         "tf_built_mb": tf_built, "tf_peak_mb": tf_peak,
         "step_seconds": times, "build_seconds": build_seconds,
         "loss_finite": bool(np.all(np.isfinite(losses))),
         "forward_flops_per_example": forward,
         "training_flops_per_example": 3 * forward,
         "executed_flops_per_example": checkpointed * forward}
  row.update(model_kind=kind, residual_attention=residual_attention)
  if kind == "pretraining":
    row["batch_fill"] = _batch_fill(batch_arrays)
  return row


def run_capped(spec, steps, timeout, max_rss_mb, min_available_mb):
  """Runs one configuration in a child process, stopping it if its resident memory passes
  max_rss_mb or the machine's available memory falls below min_available_mb; returns its JSON
  line, or `spec` plus an `error`."""
  cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec),
         "--steps", str(steps)]
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
  proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env)
  start, highest, error = time.time(), 0.0, None
  while proc.poll() is None:
    rss = _status_mb(f"/proc/{proc.pid}/status", "VmRSS")
    highest = max(highest, rss)
    available = _status_mb("/proc/meminfo", "MemAvailable")
    if rss > max_rss_mb:
      error = f"cut: resident memory passed {max_rss_mb:.0f} MB"
    elif 0 < available < min_available_mb:  # other jobs share the machine: never starve them
      error = (f"cut: the machine's available memory fell below {min_available_mb:.0f} MB "
               f"(this process at {rss:.0f} MB)")
    elif time.time() - start > timeout:
      error = f"cut: timeout {timeout}s"
    if error:
      proc.kill()
      break
    time.sleep(0.2)
  out, err = proc.communicate()
  elapsed = time.time() - start
  if error:
    return dict(spec, error=error, highest_rss_seen_mb=highest, seconds=elapsed)
  for line in reversed(out.splitlines()):
    if line.startswith("{"):
      return dict(json.loads(line), seconds=elapsed)
  tail = (err or "").strip().splitlines()[-3:]
  return dict(spec, error=f"exit {proc.returncode}: {' | '.join(tail)}", seconds=elapsed)


def _measured(rows, key):
  return {(r["model"], r["layers"], r["grad_checkpointing_period"], r["batch"]): r[key]
          for r in rows if "error" not in r}


def per_example(rows, key):
  """{"model/<layers>L/period<p>": row[key] at batch 2 - at batch 1} where both were measured."""
  peaks = _measured(rows, key)
  out = {}
  for (model, layers, period, batch), peak in peaks.items():
    if batch == 1 and (model, layers, period, 2) in peaks:
      out[f"{model}/{layers}L/period{period}"] = peaks[(model, layers, period, 2)] - peak
  return out


def extrapolate(rows, key):
  """Full-depth figures from a depth scan: every part of a step (weights, slots, gradients,
  the activations kept per layer) grows linearly with the number of layers, so two depths
  a < b give f(full) = f(a) + (full - a) * (f(b) - f(a)) / (b - a). Returns
  {"model/period<p>/batch<B>": {"per_layer": slope, "full_depth": f(full), "layers": full}}."""
  peaks = _measured(rows, key)
  full = {r["model"]: r["full_layers"] for r in rows if "error" not in r}
  out = {}
  for model, period, batch in sorted({(m, p, b) for m, _, p, b in peaks}):
    depths = sorted(l for m, l, p, b in peaks if (m, p, b) == (model, period, batch)
                    and l < full[model])
    if len(depths) < 2:
      continue
    a, b = depths[0], depths[-1]
    slope = (peaks[(model, b, period, batch)] - peaks[(model, a, period, batch)]) / (b - a)
    out[f"{model}/period{period}/batch{batch}"] = {
        "per_layer": slope, "layers": full[model],
        "full_depth": peaks[(model, a, period, batch)] + (full[model] - a) * slope}
  return out


def _table(rows):
  lines = [f"{'model':6} {'layers':>6} {'period':>6} {'B':>2} {'params M':>9} {'built MB':>9} {'peak MB':>8} "
           f"{'step MB':>8} {'TF built':>9} {'TF step':>8} {'s/step':>7} {'GFLOP/ex':>9} "
           f"{'exec GFLOP/ex':>13}"]
  for r in rows:
    head = (f"{r['model']:6} {r.get('layers') or 'all':>6} {r['grad_checkpointing_period']:>6} "
            f"{r['batch']:>2}")
    if "error" in r:
      seen = f" (highest seen {r['highest_rss_seen_mb']:.0f} MB)" if "highest_rss_seen_mb" in r else ""
      lines.append(f"{head} {r['error']}{seen}")
      continue
    lines.append(f"{head} {r['parameters'] / 1e6:>9.1f} {r['built_rss_mb']:>9.0f} "
                 f"{r['peak_rss_mb']:>8.0f} {r['step_mb']:>8.0f} {r['tf_built_mb']:>9.0f} "
                 f"{r['tf_peak_mb']:>8.0f} {r['step_seconds'][-1]:>7.1f} "
                 f"{r['training_flops_per_example'] / 1e9:>9.0f} "
                 f"{r['executed_flops_per_example'] / 1e9:>13.0f}")
  return "\n".join(lines)


# ------------------------------------------------------------------ the GPU plan (arithmetic)
GPU_GB = (16, 32, 40, 80)
RESERVE_MB = 1536        # CUDA context, cuBLAS/cuDNN workspaces, NCCL and Horovod buffers
FRAGMENTATION = 0.9      # share of the rest the allocator can hand out as needed tensors


def _full_depth(model):
  import yaml  # pylint: disable=g-import-not-at-top
  with open(os.path.join(_ROOT, "configs", "models", MODEL_CONFIGS[model])) as f:
    return yaml.safe_load(f)["num_hidden_layers"]


def _figures(rows):
  """{(model, layers, period, batch): TF allocator step peak} and {model: params at full depth}."""
  peaks, params = {}, {}
  for r in rows:
    if "error" in r:
      continue
    peaks[(r["model"], r["layers"], r["grad_checkpointing_period"], r["batch"])] = r["tf_peak_mb"]
    params.setdefault(r["model"], {})[r["layers"]] = r["parameters"]
  full = {}
  for model, by_depth in params.items():
    depth = max(r["full_layers"] for r in rows if r.get("model") == model and "error" not in r)
    if depth in by_depth:
      full[model] = by_depth[depth]
    elif 1 in by_depth and 2 in by_depth:   # parameters are exactly linear in the depth
      full[model] = by_depth[1] + (depth - 1) * (by_depth[2] - by_depth[1])
  return peaks, full


def derive(full_rows, scan_rows, precision, reference=None):
  """Per-example activation `a` and batch-independent `fixed` MB of a full-depth step, per
  (model, period):
  - measured, where the full depth ran at batch 1 and 2 (fixed: at least the state below);
  - from batch 1 alone where batch 2 did not fit: the peak minus weights and slots, with
    fixed = the state (the gradients counted twice, a margin);
  - for a model that did not fit at all, the larger of the estimates available (the plan should
    err on the safe side):
      scan:  a(full) = a(2) + (full - 2) * [a(2) - a(1)] * r, with r = base's
             [a(12) - a(2)] / 10 / [a(2) - a(1)] (same precision and period); used only when
             base's a(2) - a(1) is above the noise (100 MB);
      ratio: a(full, float32) of the same model (`reference`) times base's a(precision) /
             a(float32), for a mixed-precision plan;
    with fixed = the state.
  The state is weights + 2 AdamW slots + gradients, 16 bytes per parameter (+ 2 for the
  float16 weight copies under mixed_float16)."""
  peaks, params = _figures(full_rows + scan_rows)
  depth = {r["model"]: r["full_layers"] for r in full_rows + scan_rows if "error" not in r}
  copies = 2 if precision == "mixed_float16" else 0
  out = {}

  def a_at(model, layers, period):
    pair = [peaks.get((model, layers, period, b)) for b in (1, 2)]
    return None if None in pair else pair[1] - pair[0]

  for model in sorted(depth, key=lambda m: m != "base"):   # base first: it calibrates
    n = depth[model]
    state = (16 + copies) * params[model] / 2 ** 20
    for period in (0, 1):
      a, fixed, how = a_at(model, n, period), None, "measured (batch 2 - batch 1)"
      if a is not None:  # never below weights + slots + gradients (+ copies): the peak may
        fixed = max(peaks[(model, n, period, 1)] - a, state)  # come before all gradients exist
      elif (model, n, period, 1) in peaks:
        # Batch 1 minus weights, slots (and copies) only: the gradients are left in `a` too,
        # because a batch-1 peak can come before all of them exist. Where batch 2 was measured
        # as well (base, mixed_float16, period 0) this gives 6040 MB against 6062 MB.
        fixed = state
        a = peaks[(model, n, period, 1)] - (state - 4 * params[model] / 2 ** 20)
        how = "measured at batch 1, minus weights and slots"
      else:
        estimates = {}
        a1, a2 = a_at(model, 1, period), a_at(model, 2, period)
        b1, b2 = a_at("base", 1, period), a_at("base", 2, period)
        base = out.get(("base", period), {}).get("a")
        if None not in (a1, a2, b1, b2, base) and b2 - b1 > 100:
          ratio = (base - b2) / (depth["base"] - 2) / (b2 - b1)
          estimates[f"scan, r = {ratio:.2f}"] = a2 + (n - 2) * (a2 - a1) * ratio
        if reference and (model, period) in reference and ("base", period) in reference \
            and base is not None:
          share = base / reference[("base", period)]["a"]
          estimates[f"float32 x {share:.2f}"] = reference[(model, period)]["a"] * share
        if not estimates:
          continue
        pick = max(estimates, key=estimates.get)
        a, fixed = estimates[pick], state
        how = "derived: " + ", ".join(f"{k}: {v / 1024:.1f} GB" for k, v in estimates.items())
      out[(model, period)] = {"a": a, "fixed": fixed, "accumulator": 4 * params[model] / 2 ** 20,
                              "parameters": params[model], "how": how}
  return out


def micro_batches(figures, gpu_gb, accumulate):
  usable = FRAGMENTATION * (gpu_gb * 1024 - RESERVE_MB)
  need = figures["fixed"] + (figures["accumulator"] if accumulate else 0.0)
  return max(int((usable - need) // figures["a"]), 0)


def gpu_plan(results_dir):
  """Prints the per-GPU micro-batch table from the saved results; returns it as a dict."""
  def load(name):
    path = os.path.join(results_dir, name)
    if not os.path.exists(path):
      return []
    with open(path) as f:
      rows = json.load(f)["rows"]
    for r in rows:  # rows written before depth scans existed are full-depth rows
      if "full_layers" not in r:
        r["full_layers"] = _full_depth(r["model"])
      r["layers"] = r.get("layers") or r["full_layers"]
    return rows

  table, reference = {}, None
  # G = 256 (HotpotQA), then the G = 512 run (OpenKP's global length; base only).
  for precision, suffix, label in (("float32", "", ""), ("mixed_float16", "_mixed_float16", ""),
                                   ("mixed_float16", "_mixed_float16_g512", "/G512")):
    derived = derive(load(f"memory_per_example{suffix}.json"),
                     load(f"memory_per_layer{suffix}.json"), precision,
                     None if label else reference)
    reference = reference or derived
    for (model, period), f in sorted(derived.items()):
      key = f"{model}/{precision}/period{period}{label}"
      table[key] = dict(f, micro_batch={f"{gb}GB": [micro_batches(f, gb, False),
                                                    micro_batches(f, gb, True)]
                                        for gb in GPU_GB})
      cells = " ".join(f"{gb:>3} GB: {table[key]['micro_batch'][f'{gb}GB'][0]:>2} /"
                       f"{table[key]['micro_batch'][f'{gb}GB'][1]:>2}" for gb in GPU_GB)
      print(f"{key:33} a {f['a'] / 1024:5.2f} GB  fixed {f['fixed'] / 1024:5.2f} GB  {cells}"
            f"   ({f['how']})")
  print(f"micro-batch per GPU without / with the accumulation buffer (4 bytes per parameter); "
        f"usable = {FRAGMENTATION} x (GPU - {RESERVE_MB} MB)")
  return {"reserve_mb": RESERVE_MB, "fragmentation": FRAGMENTATION, "table": table}


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--model_kind", default="hotpotqa", choices=MODEL_KINDS,
                      help="the HotpotQA fine-tuning step or the pretraining step (MLM + CPC)")
  parser.add_argument("--residual_attention", default="none", choices=["none", "sum"],
                      help="RealFormer scores on top of the model config (the official configs: "
                           "none; the pretraining recipe: sum)")
  parser.add_argument("--models", default="base,large")
  parser.add_argument("--long_len", type=int, default=4096)
  parser.add_argument("--global_len", type=int, default=256)
  parser.add_argument("--batches", default="1,2")
  parser.add_argument("--periods", default="1,0", help="grad_checkpointing_period values")
  parser.add_argument("--large_periods", default="1",
                      help="periods for large (without checkpointing it does not fit here)")
  parser.add_argument("--layers", default="0",
                      help="encoder depths to measure, 0 = the config's; two or more smaller "
                           "depths (e.g. 1,2) are extrapolated to the full depth")
  parser.add_argument("--mixed_precision", default="", choices=["", "mixed_float16", "mixed_bfloat16"],
                      help="Keras policy (activation bytes as a GPU would hold them; slow on CPU)")
  parser.add_argument("--steps", type=int, default=1, help="training steps per configuration")
  parser.add_argument("--max_rss_mb", type=float, default=17000)
  parser.add_argument("--min_available_mb", type=float, default=2000,
                      help="stop a configuration when the machine has less memory available")
  parser.add_argument("--timeout", type=int, default=900, help="seconds per configuration")
  parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results",
                                                       "memory_per_example.json"))
  parser.add_argument("--plan", action="store_true",
                      help="no measurement: print the per-GPU micro-batches derived from the "
                           "saved results and write results/gpu_plan.json")
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()

  if args.plan:
    results = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    with open(os.path.join(results, "gpu_plan.json"), "w") as f:
      json.dump(gpu_plan(results), f, indent=2)
    return

  if args.child:
    spec = json.loads(args.child)
    print(json.dumps(_one(spec["model"], spec["long_len"], spec["global_len"], spec["batch"],
                          spec["grad_checkpointing_period"], spec.get("layers", 0),
                          args.steps, spec.get("precision", ""),
                          spec.get("model_kind", "hotpotqa"),
                          spec.get("residual_attention", "none"))))
    return

  plan = []
  for model in args.models.split(","):
    periods = args.large_periods if model == "large" else args.periods
    for layers in (int(n) for n in args.layers.split(",")):
      for period in (int(p) for p in periods.split(",")):
        for batch in (int(b) for b in args.batches.split(",")):
          plan.append({"model": model, "layers": layers, "grad_checkpointing_period": period,
                       "batch": batch, "long_len": args.long_len,
                       "global_len": args.global_len, "precision": args.mixed_precision,
                       "model_kind": args.model_kind,
                       "residual_attention": args.residual_attention})
  rows = []
  for i, spec in enumerate(plan):
    print(f"[{i + 1}/{len(plan)}] {spec} ...", flush=True)
    row = run_capped(spec, args.steps, args.timeout, args.max_rss_mb, args.min_available_mb)
    rows.append(row)
    if "error" in row:
      print(f"    {row['error']}", flush=True)
    else:
      print(f"    peak {row['peak_rss_mb']:.0f} MB (built {row['built_rss_mb']:.0f} MB), "
            f"{row['step_seconds'][-1]:.1f} s/step, {row['seconds']:.0f} s in all", flush=True)
  increments = {"peak_rss": per_example(rows, "peak_rss_mb"),
                "tf_step_peak": per_example(rows, "tf_peak_mb")}
  print()
  print(_table(rows))
  for what, values in increments.items():
    for key, value in values.items():
      print(f"per example (batch 2 - batch 1), {what}, {key}: {value:.0f} MB")
  extrapolated = {"peak_rss": extrapolate(rows, "peak_rss_mb"),
                  "tf_step_peak": extrapolate(rows, "tf_peak_mb")}
  for what, values in extrapolated.items():
    for key, value in values.items():
      print(f"extrapolated to {value['layers']} layers, {what}, {key}: "
            f"{value['full_depth']:.0f} MB ({value['per_layer']:.0f} MB per layer)")
  sys.path.insert(0, _ROOT)
  pretraining = args.model_kind == "pretraining"
  result = {"benchmark": "memory_per_example", "model_kind": args.model_kind,
            "task_model": ("etc_realformer.models.pretraining EtcPretrainingModel (MLM 0.8 + "
                           "CPC 0.2)" if pretraining else "tasks.hotpotqa HotpotQaModel"),
            "residual_attention": args.residual_attention,
            "long_len": args.long_len, "global_len": args.global_len, "steps": args.steps,
            "dtype": args.mixed_precision or "float32",
            "optimizer": "lamb" if pretraining else "adamw",
            "max_rss_mb": args.max_rss_mb,
            **({"data_config": dataclasses.asdict(_data_config(args.long_len, args.global_len))}
               if pretraining else {}),
            "min_available_mb": args.min_available_mb,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "per_example_mb": increments, "extrapolated_mb": extrapolated, "rows": rows}
  from etc_realformer.io_utils import atomic_write_json  # pylint: disable=g-import-not-at-top
  atomic_write_json(args.output, result, sort_keys=False)
  print(f"\nwrote {args.output}")


if __name__ == "__main__":
  main()
