"""Installs the etc_realformer package (ETC global-local attention with RealFormer residual scores)."""

import pathlib
import re

from setuptools import find_packages, setup

_ROOT = pathlib.Path(__file__).parent
_VERSION = re.search(
    r'__version__ = "([^"]+)"', (_ROOT / "etc_realformer" / "__init__.py").read_text()
).group(1)

setup(
    name="etc-realformer",
    version=_VERSION,
    description="ETC global-local attention with RealFormer residual attention for long documents (tf-keras).",
    long_description=(_ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["etc_realformer", "etc_realformer.*", "tasks", "tasks.*"]),
    package_data={"etc_realformer.data": ["embedded/*.txt", "nltk_data/NOTICE.md",
                                            "nltk_data/tokenizers/punkt_tab/README",
                                            "nltk_data/tokenizers/punkt_tab/english/*"]},
    python_requires=">=3.10",
    install_requires=[
        "tensorflow==2.21.0",
        "tf-keras==2.21.0",
        "tensorflow-text==2.21.1",
        "tensorflow-datasets==4.9.10",
        "absl-py>=2.1",
        "pyyaml>=6.0",
        "numpy",
        "tensorboard",
        "natural-questions==1.0.6",   # the official NQ scorer (tasks.nq.metrics)
        "six",                        # needed by the NQ scorer
        "matplotlib",                 # attention-analysis plots (etc_realformer.analyze)
        "nltk==3.10.4",               # sentences as Google's WikiHop converter cuts them
        "safetensors",                # Hugging Face weight files (BERT lifting and export)
    ],
    extras_require={
        "test": ["pytest==9.2.0", "pytest-xdist==3.8.0"],
        # Horovod 0.28.1 must be built from source against TensorFlow 2.21: .ci/build_horovod.sh
        "horovod": ["cloudpickle", "psutil", "pyyaml", "packaging"],
    },
)
