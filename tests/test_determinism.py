"""train.deterministic: the same short fine-tuning run twice gives bit-identical weights,
metrics and predictions; another seed gives other weights; a process whose TensorFlow already
runs several inter-op threads gets a clear error instead of silently different runs; the
package selects TensorFlow's pooling CPU allocator unless the environment says otherwise."""

import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

from etc_realformer.training import determinism
from synthetic_data import wikihop as synthetic
from tasks.wikihop.task import TASK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(tmp_path, name, data, seed, predict=True):
  run_config = TASK.load_run_config(os.path.join(ROOT, "configs", "wikihop", "tiny.yaml"))
  run_config["features"].update(long_seq_len=256, global_seq_len=96,   # the short preset's size
                                max_num_sentences=20)
  run_config["train"].update(train_file=data["train"], dev_file=data["dev"], num_train_steps=12,
                             warmup_steps=2, checkpoint_every=12, log_every=4, seed=seed,
                             init_checkpoint="", learned_vocab_size=200)
  assert run_config["train"]["deterministic"] is True  # the demo configs' default
  out = str(tmp_path / name)
  metrics = TASK.run_finetuning(run_config, out, verbose=0)
  reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(os.path.join(out, "checkpoints")))
  weights = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()
             if "OPTIMIZER_SLOT" not in n and n != "_CHECKPOINTABLE_OBJECT_GRAPH"}
  if not predict:
    return weights, metrics, None
  prediction = str(tmp_path / f"{name}.json")
  TASK.predict_file(os.path.join(out, "export"), data["dev"], prediction)
  with open(prediction, encoding="utf-8") as f:
    return weights, metrics, f.read()


def test_same_seed_same_bits_other_seed_other_weights(tmp_path):
  data = synthetic.ensure_demo_data(str(tmp_path / "data"), 32, 8, seed=0, preset="short")
  first = _run(tmp_path, "a", data, seed=0)
  again = _run(tmp_path, "b", data, seed=0)
  other = _run(tmp_path, "c", data, seed=1, predict=False)
  assert first[0].keys() == again[0].keys() and len(first[0]) > 10
  for name, value in first[0].items():
    np.testing.assert_array_equal(value, again[0][name], err_msg=name)
  metric_keys = [k for k in first[1] if k not in ("seconds", "timings") and "per_second" not in k
                 and "time" not in k]
  assert json.dumps({k: first[1][k] for k in metric_keys}, sort_keys=True, default=str) == \
      json.dumps({k: again[1][k] for k in metric_keys}, sort_keys=True, default=str)
  assert first[2] == again[2]  # the prediction files
  assert any(not np.array_equal(value, other[0][name]) for name, value in first[0].items())


def test_started_runtime_with_several_inter_op_threads_is_a_clear_error():
  code = ("import os; os.environ['TF_NUM_INTEROP_THREADS'] = '2'; import etc_realformer; "
          "import tensorflow as tf; tf.constant(1.0) + 1.0; "
          "from etc_realformer.training import determinism; determinism.enable()")
  env = dict(os.environ, TF_NUM_INTEROP_THREADS="2")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=False)
  assert result.returncode != 0
  assert "TF_NUM_INTEROP_THREADS=1" in result.stderr and "train.deterministic" in result.stderr


def test_bit_for_bit_repeats_are_promised_for_one_intra_op_thread_only(monkeypatch):
  # The demo command prints which of the two it is (docs/long_documents.md: two threads drift).
  assert tf.config.threading.get_intra_op_parallelism_threads() == 0  # set by the environment
  monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "1")
  assert determinism.repeats_bit_for_bit()
  monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "2")
  assert not determinism.repeats_bit_for_bit()


def _allocator_report(package: bool, setting):
  """(the process's TF_CPU_ALLOCATOR_USE_BFC, whether its CPU allocator keeps statistics)."""
  code = (("import etc_realformer; " if package else "") +
          "import os, tensorflow as tf; tf.ones([256, 256]) * 2.0; "
          "print(os.environ.get('TF_CPU_ALLOCATOR_USE_BFC'), flush=True); "
          "print(tf.config.experimental.get_memory_info('CPU:0')['peak'] > 0)")
  env = {k: v for k, v in os.environ.items() if k != "TF_CPU_ALLOCATOR_USE_BFC"}
  if setting is not None:
    env["TF_CPU_ALLOCATOR_USE_BFC"] = setting
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=False)
  printed = result.stdout.split()
  if result.returncode != 0:  # the allocator keeps no statistics
    assert "Allocator stats not available" in result.stderr, result.stderr[-2000:]
    return printed[0], False
  return printed[0], printed[1] == "True"


def test_importing_the_package_selects_the_pooled_cpu_allocator_unless_told_otherwise():
  # etc_realformer/__init__.py: TensorFlow's BFC allocator on CPU (the same arithmetic, less
  # time), which keeps statistics; "false" keeps TensorFlow's default.
  assert _allocator_report(True, None) == ("true", True)
  package_false = _allocator_report(True, "false")
  assert package_false[0] == "false"
  # TensorFlow's default allocator keeps no statistics, except on CPUs where its oneDNN
  # optimisations bring their own pooling allocator (seen on an AVX-512 BF16 / VNNI machine;
  # TF_ENABLE_ONEDNN_OPTS=0 takes it away): there the statistics cannot tell the two apart, and
  # "false" must behave as it does without the package.
  assert package_false == _allocator_report(False, "false")


def test_a_task_command_sets_the_environment_before_tensorflow_is_imported():
  # tasks/__init__.py sets TF_USE_LEGACY_KERAS before anything in tasks/ imports TensorFlow, so
  # tf-keras is `tf.keras` and TensorFlow does not load Keras 3 as well.
  code = ("import sys, tasks.wikihop.task, tensorflow as tf; "
          "print('keras.src' in sys.modules, tf.keras.__name__.split('.')[0])")
  env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.split() == ["False", "tf_keras"]


# A function whose AddN of four 120 MB tensors Grappler's memory optimizer rewrites into
# accumulations (AssignAdd into a temporary variable, in the order the inputs become ready)
# unless the package switched that pass off; the profile shows which of the two ran.
_ADDN_PROFILE = """
import glob, os, sys, tempfile
if sys.argv[1] == "package":
  import etc_realformer
  from etc_realformer import runtime
  assert runtime.addn_sums_kept()
import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2
x = tf.random.stateless_normal([30_000_000], seed=[1, 2])
f = tf.function(lambda x: tf.add_n([tf.sin(x), tf.cos(x), tf.exp(x), tf.tanh(x)]))
f(x)
with tempfile.TemporaryDirectory() as trace_dir:
  tf.profiler.experimental.start(trace_dir)
  f(x)
  tf.profiler.experimental.stop()
  path = sorted(glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True))[-1]
  space = xplane_pb2.XSpace()
  with open(path, "rb") as trace:
    space.ParseFromString(trace.read())
names = [plane.event_metadata[event.metadata_id].name for plane in space.planes
         for line in plane.lines for event in line.events]
print("accumulations", sum("tmp_var_accum" in name for name in names))
print("addn", sum(name.endswith(":AddN") for name in names))
"""


def test_importing_the_package_keeps_gradient_sums_in_one_order():
  # etc_realformer/runtime.py: without the package the sum runs as four AssignAdds (their order
  # the executor's), with it as one AddN (its inputs' order).
  counts = {}
  for mode in ("tensorflow", "package"):
    result = subprocess.run([sys.executable, "-c", _ADDN_PROFILE, mode], capture_output=True,
                            text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    counts[mode] = dict(line.split() for line in result.stdout.splitlines()[-2:])
  assert counts["tensorflow"] == {"accumulations": "4", "addn": "0"}
  assert counts["package"] == {"accumulations": "0", "addn": "1"}
