"""OpenKP decoding by Google's rules (tasks/openkp/decode.py) on hand-made logits."""

import numpy as np
import pytest

from tasks.openkp import decode as D

TEXT = "Solar Kettle Guide  the SOLAR kettle for camping"
#       0     1      2    3 4   5     6      7   8        (word 3 is empty: two spaces)


def _logits(cells, width=12):
  logits = np.full([5, width], -10000.0, np.float32)               # [max_ngram, L]
  for (n, start), value in cells.items():
    logits[n - 1, start] = value
  return logits


def test_best_cells_first_then_lowercased_and_deduplicated():
  logits = _logits({(2, 0): 9.0, (2, 5): 8.0, (1, 8): 7.0, (3, 0): 6.0, (1, 1): 5.0,
                    (1, 2): 4.0, (1, 7): 3.0})
  line = D.page_prediction("u", TEXT, logits)
  # (2, 5) "SOLAR kettle" is (2, 0) "solar kettle" once lower-cased: dropped.
  assert line == {"url": "u", "KeyPhrases": [["solar kettle"], ["camping"],
                                             ["solar kettle guide"], ["kettle"], ["guide"]]}


def test_empty_and_cut_phrases():
  # (1, 3) is the empty word: skipped. (2, 8) runs past the text: cut to "camping". (1, 11)
  # starts past the text: empty, skipped. (2, 2) is "guide " with the empty word.
  logits = _logits({(1, 3): 9.0, (2, 8): 8.0, (1, 11): 7.0, (2, 2): 6.0, (1, 8): 5.0})
  assert D.key_phrases(TEXT.split(" "), D.top_positions(logits)) == [
      "camping", "guide ", "solar", "kettle", "guide"]


def test_masked_cells_fill_a_short_page_in_flat_order():
  logits = _logits({(4, 1): 1.0})
  positions = D.top_positions(logits)
  assert positions[0] == (1, 4, 1.0)
  # Then the -10000 cells, 1-grams left to right: words 0, 1, 2, then 3 (empty: skipped), 4.
  assert positions[1:4] == [(0, 1, -10000.0), (1, 1, -10000.0), (2, 1, -10000.0)]
  assert D.key_phrases(TEXT.split(" "), positions) == [
      "kettle guide  the", "solar", "kettle", "guide", "the"]


def test_only_the_top_positions_are_considered():
  logits = _logits({(1, s): 10.0 - s for s in range(9)})
  positions = D.top_positions(logits, max_predictions=2)
  assert [p[:2] for p in positions] == [(0, 1), (1, 1)]
  assert D.key_phrases(TEXT.split(" "), positions) == ["solar", "kettle"]
  assert len(D.top_positions(_logits({}, width=30))) == D.MAX_POSITION_PREDICTIONS
  assert len(D.top_positions(logits)) == 60          # fewer cells than 100: all of them
  with pytest.raises(ValueError, match="ngram_logits"):
    D.top_positions(np.zeros([5]))
