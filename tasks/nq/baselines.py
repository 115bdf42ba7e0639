"""The trivial Natural Questions baseline a trained model must beat: always null."""

from typing import Sequence

from tasks.nq import decode
from tasks.nq.data import NqExample


def null_predictions(examples: Sequence[NqExample]) -> dict:
  """The "always null" baseline: every example answered null (finite scores)."""
  return {"predictions": decode.finite_scores([decode.to_prediction(e, decode.Decoded())
                                               for e in examples])}
