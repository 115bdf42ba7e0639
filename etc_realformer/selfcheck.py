r"""Checks an ETC-RealFormer encoder end to end on a generated document, with no download.

  python -m etc_realformer.selfcheck                       # tiny model, L = 1024
  python -m etc_realformer.selfcheck --config=configs/models/base.yaml --long_len=4096
  python -m etc_realformer.selfcheck --device              # first thing on a new (GPU) machine
  horovodrun -np 2 -H localhost:2 python -m etc_realformer.selfcheck --device

Builds the model from the config, encodes a synthetic packed batch (sentences with one global
token each, hard g2l, trailing padding), and reports: output shapes, the largest relative
difference between the blocked and the dense reference implementation, the time of a
forward and of a forward+backward pass for each, and the share of attention probability the
long tokens put on their own sentence's global token. Writes the resolved config and the
numbers as JSON when --output_dir is given.

--device checks the machine instead (the --config model, tiny by default, at L = 512 unless
--long_len is given), one check at a time:
  devices            the GPUs TensorFlow sees (name, compute capability, memory), or says
                     "no GPU visible: checking the CPU path" and checks the CPU (a failure
                     only with --require_gpu);
  train_step_xla_off, train_step_xla_on
                     --device_steps timed training steps (forward, backward,
                     LossScaleOptimizer(AdamW) apply) of EtcModel with a token-prediction head
                     under mixed_float16, jit_compile off and on (--noxla skips "on"): the loss
                     is finite and the weights were updated; step time and tokens per second
                     (B x L long tokens per step). The global dtype policy is put back after;
  blocked_vs_dense   the blocked and the dense implementation agree on the device (float32,
                     TF32 off): max relative difference <= --tolerance;
  horovod_allreduce  only under horovodrun or mpirun (HOROVOD_RANK or OMPI_COMM_WORLD_RANK
                     set): hvd.init(), one GPU per rank, rank-dependent tensors average to the
                     expected values; otherwise skipped ("not launched with horovodrun");
  horovod_ranks      with 2 or more ranks: every rank's own checks passed.
Under horovodrun every rank runs the checks and only rank 0 prints. The last line printed is
one JSON object with each check's status ("pass", "fail" or "skip"), the tokens per second and
the blocked-vs-dense difference (--output_dir also gets every number, in device_check.json);
the exit code is 1 when any check failed.

Why one module of about 600 lines: it is a command a user runs first on a new machine; the
encoder check and the device checks share the model builder, the timing helpers and the JSON
report, and a single file is what a user reads to see what was checked.
"""

import contextlib
import json
import os
import time
from typing import Any, Dict, List, Optional

from absl import app
from absl import flags
from absl import logging
import numpy as np

import etc_realformer  # sets TF_USE_LEGACY_KERAS before TensorFlow loads
import tensorflow as tf  # pylint: disable=g-bad-import-order
import tf_keras  # pylint: disable=g-bad-import-order

_DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "configs", "models", "tiny.yaml")
_DEVICE_LONG_LEN = 512  # --device's default L: milliseconds per step even on a CPU
# Set by horovodrun (Gloo) and by mpirun (Open MPI) in every launched process.
_LAUNCHER_RANK_VARIABLES = ("HOROVOD_RANK", "OMPI_COMM_WORLD_RANK")
NO_GPU_MESSAGE = "no GPU visible: checking the CPU path"
NO_HOROVOD_MESSAGE = "not launched with horovodrun: Horovod allreduce not checked"

FLAGS = flags.FLAGS
flags.DEFINE_string("config", _DEFAULT_CONFIG, "Model config (.yaml or .json).")
flags.DEFINE_integer("long_len", 1024,
                     f"Long input length L (--device: {_DEVICE_LONG_LEN} unless given).")
flags.DEFINE_integer("sentence_len", 16, "Word pieces per synthetic sentence (G = L / this).")
flags.DEFINE_integer("batch_size", 2, "Batch size.")
flags.DEFINE_integer("max_dense_len", 4096, "Skip the O(L^2) dense comparison above this L.")
flags.DEFINE_string("output_dir", None,
                    "Where to write config.json and selfcheck.json (--device: device_check.json).")
flags.DEFINE_integer("seed", 0, "Random seed for weights and the synthetic document.")
flags.DEFINE_float("tolerance", 1e-5,
                   "Largest accepted blocked-vs-dense max relative difference.")
flags.DEFINE_bool("device", False,
                  "Check this machine (GPUs, mixed_float16 training step with XLA off and on, "
                  "blocked == dense, Horovod allreduce under horovodrun) instead of the model.")
flags.DEFINE_integer("device_steps", 3, "--device: timed training steps per XLA setting.")
flags.DEFINE_bool("xla", True, "--device: also run the training step with jit_compile (--noxla "
                  "skips it: on a 2-core CPU XLA compiles the tiny model's step in 30 to 50 s).")
flags.DEFINE_bool("require_gpu", False, "--device: fail the devices check when no GPU is visible.")


def synthetic_features(config, batch_size, long_len, sentence_len, seed):
  """A packed batch: sentences of `sentence_len` pieces, one global SENTENCE token each."""
  rng = np.random.default_rng(seed)
  global_len = max(1, long_len // sentence_len)
  used = long_len - long_len // 10  # the last 10% is padding
  token_ids = np.zeros((batch_size, long_len), np.int32)
  token_ids[:, :used] = rng.integers(1000 % config.vocab_size or 1, config.vocab_size,
                                     (batch_size, used))
  sentence_ids = np.minimum(np.arange(long_len) // sentence_len, global_len - 1)
  sentence_ids = np.broadcast_to(sentence_ids, (batch_size, long_len)).astype(np.int32)
  n_global = -(-used // sentence_len)
  global_token_ids = np.zeros((batch_size, global_len), np.int32)
  global_token_ids[:, :n_global] = 1  # SENTENCE
  long_breakpoints = np.zeros((batch_size, long_len), np.int32)
  long_breakpoints[:, used - 1] = 1
  global_breakpoints = np.zeros((batch_size, global_len), np.int32)
  global_breakpoints[:, n_global - 1] = 1
  return {"token_ids": token_ids, "global_token_ids": global_token_ids,
          "sentence_ids": sentence_ids, "long_breakpoints": long_breakpoints,
          "global_breakpoints": global_breakpoints}


def _timed(fn, repeats=2):
  fn()  # trace
  start = time.perf_counter()
  for _ in range(repeats):
    fn()
  return (time.perf_counter() - start) / repeats


def max_relative_difference(outputs, reference):
  """max |output - reference| / max |reference|, over long_output and global_output."""
  diffs = []
  for key in ("long_output", "global_output"):
    expected = np.asarray(reference[key], np.float64)
    actual = np.asarray(outputs[key], np.float64)
    diffs.append(np.abs(actual - expected).max() / np.abs(expected).max())
  return float(max(diffs))


def build_models(config, implementations=("blocked", "dense")):
  """{implementation: EtcModel}, every model with the first one's (random) weights."""
  models = {}
  for impl in implementations:
    logging.info("building the %s model", impl)
    models[impl] = etc_realformer.EtcModel(config, implementation=impl)
    models[impl].build()
    if impl != implementations[0]:
      models[impl].set_weights(models[implementations[0]].get_weights())
  return models


def run_selfcheck(config, batch_size, long_len, sentence_len, max_dense_len, seed=0):
  """Returns a dict of the measured numbers (see the module docstring)."""
  tf.random.set_seed(seed)
  features = synthetic_features(config, batch_size, long_len, sentence_len, seed)
  report = {"long_len": long_len, "global_len": features["global_token_ids"].shape[1],
            "batch_size": batch_size}
  implementations = ["blocked"] + (["dense"] if long_len <= max_dense_len else [])
  models = build_models(config, implementations)
  outputs = {}
  for impl, model in models.items():
    forward = tf.function(lambda m=model: m(features))
    outputs[impl] = forward()

    def train_step(m=model):
      with tf.GradientTape() as tape:
        out = m(features, training=True)
        loss = tf.reduce_mean(out["long_output"] ** 2) + tf.reduce_mean(out["global_output"] ** 2)
      return tape.gradient(loss, m.trainable_variables)

    report[f"{impl}_forward_seconds"] = _timed(forward)
    report[f"{impl}_forward_backward_seconds"] = _timed(tf.function(train_step))
    logging.info("%s: forward %.3f s, forward+backward %.3f s", impl,
                 report[f"{impl}_forward_seconds"], report[f"{impl}_forward_backward_seconds"])
  out = outputs["blocked"]
  report["long_output_shape"] = out["long_output"].shape.as_list()
  report["global_output_shape"] = out["global_output"].shape.as_list()
  if "dense" in outputs:
    report["blocked_vs_dense_max_relative_difference"] = max_relative_difference(
        {k: v.numpy() for k, v in out.items()}, {k: v.numpy() for k, v in outputs["dense"].items()})
  # How much of each long token's global attention goes to its own sentence token (layer 0).
  probs = models["blocked"](features, return_attention_scores=True)["attention"][0]["long_probs"]
  b = config.local_radius + 1
  global_len = report["global_len"]
  to_global = probs[..., 3 * b:3 * b + global_len].numpy()  # [B, h, nb, b, G]
  to_global = to_global.transpose(0, 2, 3, 1, 4).reshape(batch_size, -1, config.num_attention_heads,
                                                          global_len)[:, :long_len]
  own = np.take_along_axis(to_global, features["sentence_ids"][:, :, None, None], axis=-1)
  valid = features["token_ids"] > 0
  report["layer0_own_sentence_share_of_global_attention"] = float(
      (own[..., 0].sum(-1) / np.maximum(to_global.sum((-1, -2)), 1e-9))[valid].mean())
  return report


# ------------------------------------------------------------------------------ --device mode
@contextlib.contextmanager
def _global_policy(name):
  """Sets the Keras global dtype policy for the block and puts the previous one back."""
  previous = tf_keras.mixed_precision.global_policy()
  tf_keras.mixed_precision.set_global_policy(name)
  try:
    yield
  finally:
    tf_keras.mixed_precision.set_global_policy(previous)


@contextlib.contextmanager
def _tensor_float_32(enabled):
  """Turns TF32 matmuls (Ampere and later GPUs) on or off for the block, then restores."""
  previous = tf.config.experimental.tensor_float_32_execution_enabled()
  tf.config.experimental.enable_tensor_float_32_execution(enabled)
  try:
    yield
  finally:
    tf.config.experimental.enable_tensor_float_32_execution(previous)


def _error_text(e: BaseException, limit: int = 400) -> str:
  """One line naming the exception, trimmed (XLA and CUDA errors can run to pages)."""
  text = " ".join(f"{type(e).__name__}: {e}".split())
  return text if len(text) <= limit else text[:limit] + " ..."


def _check(name: str, passed: Optional[bool], message: str, **details) -> Dict[str, Any]:
  """A check's record: status "pass", "fail" or (passed=None) "skip", a message, numbers."""
  status = "skip" if passed is None else ("pass" if passed else "fail")
  return {"name": name, "status": status, "message": message, **details}


def launcher_rank() -> Optional[int]:
  """This process's rank when started by horovodrun or mpirun, else None."""
  for variable in _LAUNCHER_RANK_VARIABLES:
    value = os.environ.get(variable)
    if value not in (None, ""):
      try:
        return int(value)
      except ValueError:
        return 0
  return None


def init_horovod():
  """hvd.init() and one GPU per process (by local rank), when launched by horovodrun.

  Call before TensorFlow touches a GPU. Returns (hvd module or None, error message or None).
  """
  if launcher_rank() is None:
    return None, None
  try:
    import horovod.tensorflow as hvd  # pylint: disable=g-import-not-at-top
    hvd.init()
  except Exception as e:  # pylint: disable=broad-except
    return None, _error_text(e)
  gpus = tf.config.list_physical_devices("GPU")
  if gpus:  # one GPU per process, as etc_realformer.training.distribution does
    gpu = gpus[hvd.local_rank() % len(gpus)]
    tf.config.set_visible_devices(gpu, "GPU")
    if hvd.local_size() > len(gpus):  # ranks share a GPU: do not let the first take it all
      tf.config.experimental.set_memory_growth(gpu, True)
  return hvd, None


def describe_devices(require_gpu: bool = False) -> Dict[str, Any]:
  """The `devices` check: TensorFlow's build and the GPUs this process sees.

  Passes with no GPU (the CPU path is then what the other checks test) unless `require_gpu`.
  """
  build = tf.sysconfig.get_build_info()
  info = {"tensorflow": tf.__version__, "tf_keras": tf_keras.__version__,
          "built_with_cuda": tf.test.is_built_with_cuda(),
          "cuda": build.get("cuda_version"), "cudnn": build.get("cudnn_version"),
          "gpus_on_machine": len(tf.config.list_physical_devices("GPU"))}
  memory_limits = {}
  try:  # what TensorFlow's allocator may use on each device (this creates the devices)
    from tensorflow.python.client import device_lib  # pylint: disable=g-import-not-at-top
    for d in device_lib.list_local_devices():
      memory_limits[d.name.replace("/device:", "")] = int(d.memory_limit)
  except Exception as e:  # pylint: disable=broad-except
    logging.warning("device memory not available: %s", _error_text(e))
  gpus = []
  visible = tf.config.get_visible_devices("GPU")  # one logical GPU per visible physical GPU
  for physical, logical in zip(visible, tf.config.list_logical_devices("GPU")):
    gpu = {"device": logical.name.replace("/device:", ""), "name": "unknown"}
    try:
      details = tf.config.experimental.get_device_details(physical)
      gpu["name"] = details.get("device_name", "unknown")
      if details.get("compute_capability"):
        gpu["compute_capability"] = ".".join(map(str, details["compute_capability"]))
    except Exception:  # pylint: disable=broad-except
      pass
    if memory_limits.get(gpu["device"]):
      gpu["memory_limit_mb"] = round(memory_limits[gpu["device"]] / 2**20)
    gpus.append(gpu)
  info["gpus"] = gpus
  if gpus:
    message = f"{len(gpus)} GPU(s) visible"
    if info["gpus_on_machine"] > len(gpus):
      message += f" ({info['gpus_on_machine']} on the machine)"
    if any(float(g.get("compute_capability", "99")) < 7.0 for g in gpus):
      message += "; compute capability < 7.0: mixed_float16 will not be faster than float32"
    return _check("devices", True, message, **info)
  message = NO_GPU_MESSAGE
  if not info["built_with_cuda"]:
    message += " (this TensorFlow is built without CUDA support)"
  elif require_gpu:
    message += " (TensorFlow has CUDA support: check the driver, nvidia-smi, CUDA_VISIBLE_DEVICES)"
  return _check("devices", not require_gpu, message, **info)


def _peak_memory_mb(device: str) -> Optional[int]:
  """The allocator's peak use on `device` since the last reset_memory_stats (None: unknown)."""
  try:
    return round(tf.config.experimental.get_memory_info(device)["peak"] / 2**20)
  except Exception:  # pylint: disable=broad-except
    return None


def check_train_step(config, features, jit_compile: bool, steps: int,
                     seed: int = 0) -> Dict[str, Any]:
  """`steps` timed training steps (after a first, compiling one) under mixed_float16.

  The model is EtcModel plus a dense token-prediction head (logits in float32), trained with
  LossScaleOptimizer(AdamW) on cross-entropy against the input long and global tokens (so
  every weight gets a gradient). With jit_compile the whole step (forward, backward, loss
  scaling, update) is one XLA program, as with `train.jit_compile: true`; without it no XLA
  runs at all (tf_keras optimizers otherwise compile their own update on GPUs).
  """
  name = f"train_step_xla_{'on' if jit_compile else 'off'}"
  batch_size, long_len = features["token_ids"].shape
  tokens = batch_size * long_len  # long tokens per step
  gpus = tf.config.list_logical_devices("GPU")
  device = gpus[0].name.replace("/device:", "") if gpus else None
  try:
    with _global_policy("mixed_float16"):
      tf_keras.utils.set_random_seed(seed)
      encoder = etc_realformer.EtcModel(config)
      head = tf_keras.layers.Dense(config.vocab_size, name="token_logits")
      encoder.build()
      head.build((None, None, config.hidden_size))
      variables = encoder.trainable_variables + head.trainable_variables
      from etc_realformer.training import optimizers  # pylint: disable=g-import-not-at-top
      inner = optimizers.create_optimizer("adamw", 1e-3)
      inner.jit_compile = jit_compile and bool(gpus)  # tf_keras allows it on GPUs only
      optimizer = tf_keras.mixed_precision.LossScaleOptimizer(inner)
      optimizer.build(variables)
      inputs = {k: tf.constant(v) for k, v in features.items()}

      # autograph=False: the model has no tensor-dependent Python control flow, and
      # converting it would take most of the tracing time.
      @tf.function(jit_compile=jit_compile, autograph=False)
      def train_step(inputs):
        with tf.GradientTape() as tape:
          out = encoder(inputs, training=True)
          loss = 0.0
          # Long: [B, L, hidden] float16 -> logits [B, L, vocab]; global: the same with G.
          for side, ids in (("long", "token_ids"), ("global", "global_token_ids")):
            logits = tf.cast(head(out[f"{side}_output"]), tf.float32)
            per_token = tf.nn.sparse_softmax_cross_entropy_with_logits(inputs[ids], logits)
            weights = tf.cast(inputs[ids] > 0, tf.float32)  # 0 on padding
            loss += tf.reduce_sum(per_token * weights) / tf.reduce_sum(weights)
          scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
        # Dense embedding gradients, as Horovod training reduces them (sparse_as_dense); XLA
        # also compiles the sparse (IndexedSlices) update about twice as slowly.
        grads = [tf.convert_to_tensor(g) for g in grads]
        optimizer.apply_gradients(zip(grads, variables))
        return loss

      before = [v.numpy() for v in variables]
      if device:
        tf.config.experimental.reset_memory_stats(device)
      scales = [float(optimizer.loss_scale.numpy())]
      start = time.perf_counter()
      losses = [float(train_step(inputs).numpy())]  # traces (and with XLA compiles) the step
      first_seconds = time.perf_counter() - start
      start = time.perf_counter()
      for _ in range(steps):
        losses.append(float(train_step(inputs).numpy()))  # .numpy() waits for the step
      seconds = (time.perf_counter() - start) / max(steps, 1)
      scales.append(float(optimizer.loss_scale.numpy()))
      changed = any(not np.array_equal(b, v.numpy()) for b, v in zip(before, variables))
  except Exception as e:  # pylint: disable=broad-except
    return _check(name, False, f"training step failed: {_error_text(e)}", jit_compile=jit_compile)
  # The loss scale halves at each step it skips (non-finite float16 gradients, usual in the
  # first steps) and grows only after 2000 good steps: skipped = log2(first / last scale).
  skipped = round(np.log2(scales[0] / scales[-1]))
  applied = len(losses) - skipped
  finite = bool(np.all(np.isfinite(losses)))
  passed = finite and changed and applied > 0
  details = dict(jit_compile=jit_compile, device=device or "CPU:0", policy="mixed_float16",
                 batch_size=batch_size, long_len=long_len, losses=[round(x, 4) for x in losses],
                 first_step_seconds=round(first_seconds, 3), step_seconds=round(seconds, 4),
                 tokens_per_second=round(tokens / seconds, 1), updates_applied=applied,
                 steps_skipped_by_loss_scaling=skipped, loss_scale=scales[-1])
  if device:
    details["peak_memory_mb"] = _peak_memory_mb(device)
  if passed:
    message = (f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, {seconds * 1e3:.1f} ms/step, "
               f"{details['tokens_per_second']:,.0f} tokens/s (first step {first_seconds:.1f} s)")
    if details.get("peak_memory_mb") is not None:
      message += f", peak memory {details['peak_memory_mb']} MB"
  elif not finite:
    message = f"loss is not finite: {losses}"
  else:
    message = (f"weights not updated ({applied} of {len(losses)} updates applied, loss scale "
               f"{scales[-1]:g})")
  return _check(name, passed, message, **details)


def check_blocked_vs_dense(config, features, tolerance, seed=0) -> Dict[str, Any]:
  """The blocked and the dense implementation, same weights, agree on this device.

  float32 with TF32 off (Ampere and later GPUs would otherwise round matmul inputs to 10-bit
  mantissas), so the limit measures the implementations, not the arithmetic.
  """
  try:
    with _global_policy("float32"), _tensor_float_32(False):
      tf_keras.utils.set_random_seed(seed)
      models = build_models(config)
      inputs = {k: tf.constant(v) for k, v in features.items()}
      outputs, seconds = {}, {}
      for impl, model in models.items():
        forward = tf.function(lambda x, m=model: m(x), autograph=False)
        outputs[impl] = {k: v.numpy() for k, v in forward(inputs).items()}
        seconds[impl] = _timed(lambda f=forward: tf.nest.map_structure(
            lambda t: t.numpy(), f(inputs)))  # .numpy(): wait for the device
  except Exception as e:  # pylint: disable=broad-except
    return _check("blocked_vs_dense", False, f"comparison failed: {_error_text(e)}")
  diff = max_relative_difference(outputs["blocked"], outputs["dense"])
  passed = bool(diff <= tolerance)
  message = (f"max relative difference {diff:.2e} (limit {tolerance:g}); forward "
             f"{seconds['blocked'] * 1e3:.1f} ms blocked, {seconds['dense'] * 1e3:.1f} ms dense")
  return _check("blocked_vs_dense", passed, message, max_relative_difference=diff,
                tolerance=tolerance, blocked_forward_seconds=round(seconds["blocked"], 4),
                dense_forward_seconds=round(seconds["dense"], 4))


def check_allreduce(hvd) -> Dict[str, Any]:
  """Rank r contributes (r + 1) * [0, 1, ..., 7] (float32 and float16, eagerly) and, grouped
  in a tf.function, float32 [2, 3] and [4] tensors; every average must be what the ranks'
  contributions give. Also times the average of a 16 MB tensor."""
  size, rank = hvd.size(), hvd.rank()
  mean_factor = (size + 1) / 2  # mean over ranks of (r + 1)
  try:
    base = np.arange(8, dtype=np.float32)
    got = hvd.allreduce(tf.constant(base * (rank + 1)), op=hvd.Average,
                        name="selfcheck_average").numpy()
    errors = [float(np.abs(got - base * mean_factor).max())]

    @tf.function
    def grouped():  # as DistributedOptimizer reduces gradients: grouped, in a graph
      tensors = [tf.fill([2, 3], tf.cast(rank + 1, tf.float32)),  # [2, 3]
                 tf.cast(tf.range(4) * (rank + 1), tf.float32)]  # [4]
      return hvd.grouped_allreduce(tensors, op=hvd.Average, name="selfcheck_grouped")

    matrix, vector = grouped()
    errors.append(float(np.abs(matrix.numpy() - mean_factor).max()))
    errors.append(float(np.abs(vector.numpy() - np.arange(4) * mean_factor).max()))
    half = hvd.allreduce(tf.constant(base * (rank + 1), tf.float16), op=hvd.Average,
                         name="selfcheck_half").numpy()  # [8] float16
    errors.append(float(np.abs(half.astype(np.float32) - base * mean_factor).max()))
    ones = tf.ones([2**22], tf.float32)  # 16 MB
    hvd.allreduce(ones, op=hvd.Average, name="selfcheck_bandwidth").numpy()  # warm-up
    start = time.perf_counter()
    for _ in range(3):
      out = hvd.allreduce(ones, op=hvd.Average, name="selfcheck_bandwidth").numpy()
    seconds = (time.perf_counter() - start) / 3
    errors.append(float(np.abs(out - 1).max()))
  except Exception as e:  # pylint: disable=broad-except
    return _check("horovod_allreduce", False, f"allreduce failed: {_error_text(e)}", size=size)
  passed = max(errors) <= 1e-3  # the float16 average of small integers is exact
  backends = [n for n, built in (("nccl", hvd.nccl_built()), ("gloo", hvd.gloo_enabled()),
                                 ("mpi", hvd.mpi_enabled())) if built]
  message = (f"{size} ranks ({'/'.join(backends)}): averages "
             f"{'as expected' if passed else 'WRONG'} (max error {max(errors):.1e}); "
             f"16 MB allreduce {seconds * 1e3:.1f} ms")
  return _check("horovod_allreduce", bool(passed), message, size=size, backends=backends,
                max_error=max(errors), allreduce_16mb_seconds=round(seconds, 4))


def gather_ranks(hvd, checks: List[Dict[str, Any]], devices: Dict[str, Any]) -> Dict[str, Any]:
  """The `horovod_ranks` check: every rank's own checks passed (rank 0 sees the others')."""
  own = {"rank": hvd.rank(), "local_rank": hvd.local_rank(),
         "gpus": [g["name"] for g in devices.get("gpus", [])],
         "failed": [c["name"] for c in checks if c["status"] == "fail"]}
  try:
    ranks = hvd.allgather_object(own, name="selfcheck_ranks")
  except Exception as e:  # pylint: disable=broad-except
    return _check("horovod_ranks", False, f"allgather failed: {_error_text(e)}")
  failed = {r["rank"]: r["failed"] for r in ranks if r["failed"]}
  if failed:
    message = "; ".join(f"rank {r} failed {', '.join(names)}"
                        for r, names in sorted(failed.items()))
  else:
    message = f"all {len(ranks)} ranks passed their own checks"
  return _check("horovod_ranks", not failed, message, ranks=ranks)


def run_device_check(config, batch_size=2, long_len=_DEVICE_LONG_LEN, sentence_len=16,
                     steps=3, tolerance=1e-5, seed=0, xla=True, require_gpu=False, hvd=None,
                     horovod_error=None, say=print) -> Dict[str, Any]:
  """Runs the --device checks, printing each result with `say`.

  Args:
    config: the EtcConfig of the model to train and compare.
    batch_size, long_len, sentence_len: the synthetic batch (G = long_len / sentence_len).
    steps: timed training steps per XLA setting (after one untimed, compiling step).
    tolerance: the largest accepted blocked-vs-dense max relative difference.
    seed: for weights and data.
    xla: False skips the XLA-on training step (reported as "skip").
    require_gpu: fail the devices check when no GPU is visible.
    hvd: the initialised horovod.tensorflow module (under horovodrun), else None.
    horovod_error: why hvd.init() failed under horovodrun, else None.
    say: print, or a no-op on ranks other than 0.
  Returns:
    {"passed": bool, "checks": {name: {"status": "pass"|"fail"|"skip", "message", numbers}},
     ...}: what device_check.json holds.
  """
  checks = []

  def record(check):
    checks.append(check)
    say(f"[{check['status'].upper()}] {check['name']}: {check['message']}")
    return check

  devices = record(describe_devices(require_gpu))
  say(f"    TensorFlow {devices['tensorflow']}, tf-keras {devices['tf_keras']}, built with CUDA: "
      + (f"yes (CUDA {devices['cuda']}, cuDNN {devices['cudnn']})"
         if devices["built_with_cuda"] else "no"))
  for gpu in devices["gpus"]:
    say(f"    {gpu['device']}: {gpu['name']}, compute capability "
        f"{gpu.get('compute_capability', '?')}, "
        f"{gpu.get('memory_limit_mb', '?')} MB for TensorFlow")
  features = synthetic_features(config, batch_size, long_len, sentence_len, seed)
  steps_checks = [record(check_train_step(config, features, False, steps, seed))]
  if xla:
    steps_checks.append(record(check_train_step(config, features, True, steps, seed)))
  else:
    record(_check("train_step_xla_on", None, "skipped (--noxla)"))
  blocked_vs_dense = record(check_blocked_vs_dense(config, features, tolerance, seed))
  if hvd is not None:
    record(check_allreduce(hvd))
    if hvd.size() > 1:
      record(gather_ranks(hvd, checks, devices))
  elif horovod_error is not None:
    record(_check("horovod_allreduce", False, f"hvd.init() failed: {horovod_error}"))
  else:
    record(_check("horovod_allreduce", None, NO_HOROVOD_MESSAGE))
  throughput = {}
  for step in steps_checks:
    if "tokens_per_second" in step:
      key = f"xla_{'on' if step['jit_compile'] else 'off'}"
      throughput[key] = step["tokens_per_second"]
      say(f"throughput, XLA {'on ' if step['jit_compile'] else 'off'}: "
          f"{step['tokens_per_second']:,.0f} tokens/s ({step['batch_size']} x "
          f"{step['long_len']} long tokens per step in {step['step_seconds'] * 1e3:.1f} ms, "
          f"mixed_float16, {step['device']})")
  return {"selfcheck": "device", "passed": all(c["status"] != "fail" for c in checks),
          "gpus": len(devices["gpus"]), "device": steps_checks[0]["device"],
          "horovod_size": hvd.size() if hvd is not None else None,
          "tokens_per_second": throughput,
          "blocked_vs_dense_max_relative_difference": (
              float(f"{blocked_vs_dense['max_relative_difference']:.3g}")
              if "max_relative_difference" in blocked_vs_dense else None),
          "checks": {c["name"]: {k: v for k, v in c.items() if k != "name"} for c in checks}}


def device_main() -> int:
  """--device: checks the machine; only rank 0 prints under horovodrun. Returns the exit code."""
  hvd, horovod_error = init_horovod()
  rank = hvd.rank() if hvd is not None else (launcher_rank() or 0)
  if rank != 0:
    logging.set_verbosity(logging.ERROR)
  say = print if rank == 0 else (lambda *args, **kwargs: None)
  config = etc_realformer.EtcConfig.from_file(FLAGS.config)
  long_len = FLAGS.long_len if FLAGS["long_len"].present else _DEVICE_LONG_LEN
  say(f"device check: config {os.path.basename(FLAGS.config)} ({config.num_hidden_layers} "
      f"layers, hidden {config.hidden_size}), batch {FLAGS.batch_size} x {long_len} long tokens"
      + (f", Horovod rank 0 of {hvd.size()}" if hvd is not None else ""))
  summary = run_device_check(config, FLAGS.batch_size, long_len, FLAGS.sentence_len,
                             FLAGS.device_steps, FLAGS.tolerance, FLAGS.seed, FLAGS.xla,
                             FLAGS.require_gpu, hvd, horovod_error, say)
  if FLAGS.output_dir and rank == 0:
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with open(os.path.join(FLAGS.output_dir, "device_check.json"), "w", encoding="utf-8") as f:
      json.dump(summary, f, indent=2)
  failed = [name for name, c in summary["checks"].items() if c["status"] == "fail"]
  say("device check: " + ("all checks passed" if summary["passed"] else
                          f"FAILED: {', '.join(failed)}"))
  line = {k: v for k, v in summary.items() if k != "checks"}
  line["checks"] = {name: c["status"] for name, c in summary["checks"].items()}
  say(json.dumps(line))
  return 0 if summary["passed"] else 1


def main(argv):
  del argv
  if FLAGS.device:
    raise SystemExit(device_main())
  config = etc_realformer.EtcConfig.from_file(FLAGS.config)
  print(f"config {FLAGS.config}: {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
        f"radius {config.local_radius}, residual_attention={config.residual_attention}")
  report = run_selfcheck(config, FLAGS.batch_size, FLAGS.long_len, FLAGS.sentence_len,
                         FLAGS.max_dense_len, FLAGS.seed)
  width = max(len(k) for k in report)
  for key, value in report.items():
    shown = f"{value:.3g}" if isinstance(value, float) else value
    print(f"  {key:<{width}}  {shown}")
  diff = report.get("blocked_vs_dense_max_relative_difference")
  if diff is not None:
    verdict = "OK" if diff <= FLAGS.tolerance else "MISMATCH"
    print(f"blocked vs dense: {verdict} (max relative difference {diff:.2e}, "
          f"limit {FLAGS.tolerance:g})")
  if FLAGS.output_dir:
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with open(os.path.join(FLAGS.output_dir, "config.json"), "w", encoding="utf-8") as f:
      f.write(config.to_json_string())
    with open(os.path.join(FLAGS.output_dir, "selfcheck.json"), "w", encoding="utf-8") as f:
      json.dump(report, f, indent=2)
  if diff is not None and diff > FLAGS.tolerance:
    raise SystemExit(1)


if __name__ == "__main__":
  app.run(main)
