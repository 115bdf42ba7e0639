"""The WikiHop official layout's sentences: NLTK's sent_tokenize with NLTK's English Punkt
parameters, which ship with the package (pinned by digest), and a clear error without them."""

import hashlib
import os

import nltk
import pytest

from tasks.wikihop import sentences as official_sentences

ENGLISH = os.path.join(official_sentences.NLTK_DATA, "tokenizers", "punkt_tab", "english")

# SHA-256 of the four files of NLTK's punkt_tab package (english), as NLTK's data index ships them.
PUNKT_TAB_ENGLISH = {
    "abbrev_types.txt": "92a3e070f43d9b4c5534758ca40ad7343b04e7e29bfe0c2eb658a39445a4f779",
    "collocations.tab": "8e2da1225e4dd2cc9dba261ee231ccb134859e21b46006e7f472c5ee269af0cf",
    "ortho_context.tab": "4bbcca25ed3d3f06c02402abf8419b9f033b8adc06e7b482eca4e45f81a5dc4c",
    "sent_starters.txt": "f3f8535483e1dba487241b764945168123bca3209a9645e59acd1225dc76edac",
}


def test_shipped_punkt_parameters_are_nltks(monkeypatch):
  assert sorted(os.listdir(ENGLISH)) == sorted(PUNKT_TAB_ENGLISH)
  for name, digest in PUNKT_TAB_ENGLISH.items():
    with open(os.path.join(ENGLISH, name), "rb") as f:
      assert hashlib.sha256(f.read()).hexdigest() == digest, name
  # NLTK's own loader reads them, with no other copy on its search path.
  monkeypatch.setattr(nltk.data, "path", [official_sentences.NLTK_DATA])
  params = nltk.tokenize.punkt.PunktTokenizer("english")._params  # pylint: disable=protected-access
  assert len(params.ortho_context) > 20000
  assert {"dr", "u.s", "inc", "c"} <= params.abbrev_types


@pytest.mark.parametrize("text,sentences", [
    ("Mr. Smith went to St. Louis. He said no! Really? Yes.",
     ["Mr. Smith went to St. Louis.", "He said no!", "Really?", "Yes."]),
    # The trained parameters: "c." is a known abbreviation, "No." before a number is not.
    ("It was founded c. 1900 by Messrs. Smith and Jones. No. 5 was next.",
     ["It was founded c. 1900 by Messrs. Smith and Jones.", "No.", "5 was next."]),
    ("The film was released in the U.S. It grossed $5 million.",
     ["The film was released in the U.S.", "It grossed $5 million."]),
    ("He was born in 1990. the end.", ["He was born in 1990. the end."]),
    ('He said "Go." Then left.', ['He said "Go."', "Then left."]),
    ("  Leading space. Trailing space.  ", ["  Leading space.", "Trailing space."]),
    ("   ", []), ("", []),
])
def test_sentences_are_punkt_english(text, sentences):
  assert official_sentences.sentence_splitter()(text) == sentences


def test_missing_data_is_a_clear_error(monkeypatch, tmp_path):
  monkeypatch.setattr(official_sentences, "NLTK_DATA", str(tmp_path))
  monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
  official_sentences.sentence_splitter.cache_clear()
  try:
    with pytest.raises(ValueError, match="punkt_tab.*nltk.downloader punkt_tab"):
      official_sentences.sentence_splitter()
  finally:
    official_sentences.sentence_splitter.cache_clear()
