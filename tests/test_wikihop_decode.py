"""Decoding WikiHop predictions by Google's wikihop_eval.py rules, on hand-made logits."""

import numpy as np
import pytest

from tasks.wikihop import decode
from tasks.wikihop import features as F


def _example(candidates):
  return F.OfficialExample("WH_dev_0", "country x", ["doc."], candidates, "b", 1)


def test_the_highest_candidate_logit_wins():
  logits = np.full([16], -10000.0)
  logits[:3] = [0.5, 2.0, -1.0]
  assert decode.choose(_example(["a", "b", "c"]), logits) == "b"


def test_only_the_first_c_logits_count():
  # A non-candidate global token with a higher logit (it would be -10000 from the model, but
  # the rule itself only looks at the first C entries).
  logits = np.array([0.1, 0.2, 9.0, 8.0])
  assert decode.choose(_example(["a", "b"]), logits) == "b"


def test_ties_go_to_the_first_candidate_and_duplicates_keep_their_text():
  assert decode.choose(_example(["a", "b", "b"]), np.array([1.0, 3.0, 3.0])) == "b"
  assert decode.choose(_example(["x", "y"]), np.array([2.0, 2.0])) == "x"


def test_answer_is_lower_cased_and_stripped():
  assert decode.choose(_example(["New York ", "b"]), np.array([1.0, 0.0])) == "new york"


def test_no_candidates_predict_empty_and_short_logits_are_an_error():
  assert decode.choose(_example([]), np.zeros([4])) == ""
  with pytest.raises(ValueError, match="2 logits for 3 candidates"):
    decode.choose(_example(["a", "b", "c"]), np.zeros([2]))
