"""etc_realformer: ETC global-local attention with RealFormer residual attention (tf-keras)."""

import os

# tf-keras (the Keras 2 API) must be what `tf.keras` means; set before TensorFlow is imported.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
# TensorFlow's pooling CPU allocator instead of its default, which takes each tensor from malloc:
# malloc maps large blocks fresh from the kernel and unmaps them when freed, so every step faults
# the pages of its score-sized tensors in again. The same arithmetic (the demos train to the
# same last bit), 22-30% less time per layer step on a 2-core CPU (benchmarks/cpu_allocator.py).
# Read when TensorFlow's runtime starts (its first op); "false" in the environment keeps the
# default allocator.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

__version__ = "0.1.0"

from etc_realformer.config import EtcConfig  # pylint: disable=g-import-not-at-top
from etc_realformer import layers  # pylint: disable=g-import-not-at-top
from etc_realformer import ops  # pylint: disable=g-import-not-at-top
from etc_realformer.models import EtcModel, EtcPretrainingModel  # pylint: disable=g-import-not-at-top
from etc_realformer import runtime  # pylint: disable=g-import-not-at-top

# Gradient sums in a fixed order (Grappler's memory optimizer off): the same step gives the same
# bits however the executor orders it, in less time and memory (etc_realformer/runtime.py).
runtime.keep_addn_sums()
