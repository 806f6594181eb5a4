"""Write catalogs/english-words.json: the English words typo matching leaves alone.

    python benchmark/make-english-words.py [--words /usr/share/dict/american-english]
        [--copyright /usr/share/doc/wamerican/copyright] [--out catalogs/english-words.json]

The offline classifier reads a prompt word that no tool uses as a typo of a tool word one edit
away ("remidn" -> "remind"). A correctly spelt English word is not a typo: "plant" is not
"plan", "bored" is not the "bord" of "tableau de bord", "decent" is not "recent". The list is
SCOWL's American English list at size 50 (Debian's ``wamerican`` package, ``apt-get install
wamerican``): its lower-case
ASCII words of as many letters as typo matching reads (`MIN_QUERY_TYPO_LENGTH` to
`MAX_TYPO_LENGTH`; possessives are left out). Its capitalised proper names ("Paris", "Denver")
are a second list, ``names``: a name is no typo only where the prompt writes it capitalised
("chanel" typed for "channel" is still read as "channel"). SCOWL's copyright
notice travels with the list (``_meta.license``), as its licence asks. Built from a general
dictionary, not from any case file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resolver._offline import MAX_TYPO_LENGTH, MIN_QUERY_TYPO_LENGTH


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", default="/usr/share/dict/american-english")
    parser.add_argument("--copyright", default="/usr/share/doc/wamerican/copyright")
    parser.add_argument("--out", default="catalogs/english-words.json")
    args = parser.parse_args()
    raw = Path(args.words).read_bytes()
    words = sorted(
        {
            w
            for w in raw.decode("utf-8").split()
            if w.isascii()
            and w.isalpha()
            and w.islower()
            and MIN_QUERY_TYPO_LENGTH <= len(w) <= MAX_TYPO_LENGTH
        }
    )
    names = sorted(
        {
            w.lower()
            for w in raw.decode("utf-8").split()
            if w.isascii()
            and w.isalpha()
            and w[0].isupper()
            and w[1:].islower()
            and MIN_QUERY_TYPO_LENGTH <= len(w) <= MAX_TYPO_LENGTH
        }
        - set(words)
    )
    notice = Path(args.copyright).read_text(encoding="utf-8")
    start = notice.find("SCOWL (Spell Checker Oriented Word Lists)")
    if start < 0:
        print(f"{args.copyright}: no SCOWL notice found", file=sys.stderr)
        return 1
    data = {
        "_meta": {
            "about": "English words typo matching leaves alone: a correctly spelt word is not "
            "a mistyped tool word (resolver/_lang.py english_words).",
            "source": f"SCOWL American English, size 50 (Debian package wamerican, "
            f"{args.words}, sha256 {hashlib.sha256(raw).hexdigest()})",
            "method": f"python benchmark/make-english-words.py: the lower-case ASCII words of "
            f"{MIN_QUERY_TYPO_LENGTH}-{MAX_TYPO_LENGTH} letters, sorted (words); the capitalised "
            "ones, lower-cased, that are not also in words (names)",
            "license": notice[start:].strip(),
        },
        "words": words,
        "names": names,
    }
    out = Path(args.out)
    out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{out}: {len(words)} words, {len(names)} names, {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
