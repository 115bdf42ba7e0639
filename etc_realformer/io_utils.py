"""Atomic file writes: a temporary file in the same folder, renamed over the target.

A reader (or a run restarted after a crash) sees either the old file or the complete new one,
never a half-written file.
"""

import json
import os
import tempfile


def atomic_write_bytes(path: str, data: bytes) -> str:
  """Writes `data` to `path` atomically, creating missing parent folders; returns `path`."""
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}-", suffix=".tmp")
  try:
    with os.fdopen(fd, "wb") as f:
      f.write(data)
      f.flush()
      os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise
  return path


def atomic_write_text(path: str, text: str) -> str:
  """UTF-8 text, "\\n" line ends, written atomically."""
  return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str, payload, **dump_args) -> str:
  """Indented, key-sorted JSON written atomically (extra json.dumps arguments allowed)."""
  dump_args.setdefault("indent", 2)
  dump_args.setdefault("sort_keys", True)
  return atomic_write_text(path, json.dumps(payload, **dump_args))


# YAML 1.1 (PyYAML's) reads `5e-5` as a string: its floats need a dot. YAML 1.2 and JSON read it
# as a number, and so does every config and `--set` here.
_FLOAT = r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
|\.[0-9_]+(?:[eE][-+][0-9]+)?
|[-+]?\.(?:inf|Inf|INF)
|\.(?:nan|NaN|NAN))$"""


def yaml_load(stream):
  """yaml.safe_load that also reads exponent floats without a dot (`5e-5`, `1E3`) as floats."""
  import re  # pylint: disable=g-import-not-at-top
  import yaml  # pylint: disable=g-import-not-at-top

  class Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    pass

  Loader.yaml_implicit_resolvers = {
      key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:float"]
      for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
  Loader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(_FLOAT, re.X),
                               list("-+0123456789."))
  return yaml.load(stream, Loader=Loader)  # nosec: a SafeLoader
