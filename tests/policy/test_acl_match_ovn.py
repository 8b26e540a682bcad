"""fabricgen's match grammar held to OVN's own parser: a match fabricgen accepts is one OVN parses.

OVN 25.03's parser (ovn-trace reading a throwaway SB, `fabricgen.lab.ovn.matches`) judges a
generated corpus (`support/match_corpus.py`) and the cases a hostile run found; fabricgen's
grammar (`fabricgen.model.acl_match`) must refuse every match OVN refuses. Where fabricgen
refuses more, it is only where the text holds a character that is not printable (OVN takes any
byte inside a quoted string; an ACL has no use for a control or a bidirectional override), and
the test counts those. The symbol table fabricgen reads fields from (`model/ovn_symbols.py`) is
asked of OVN again, field by field.
"""

from __future__ import annotations

import pytest

from fabricgen.lab.ovn.matches import judge
from fabricgen.lab.ovn.programs import Programs
from fabricgen.model import acl_match
from fabricgen.model.ovn_symbols import BOOLEAN, NOMINAL, SYMBOLS
from support.fabrics import REPO
from support.match_corpus import ADDRESS_SETS, PORT_GROUPS, Corpus

pytestmark = pytest.mark.lab
OVN_25_03 = Programs((REPO / ".ovn" / "25.03").resolve())
needs_ovn = pytest.mark.skipif(bool(OVN_25_03.missing()), reason="OVN 25.03 missing (scripts/setup.sh --test)")

FOUND = ["!!ip4", "!ip4", "!ip4.src == 10.0.0.1", "tcp.dst", "tcp.dst == 70000", "tcp.dst == 080",
         "ip4.src == 300.1.1.1", "ip4.src == 010.1.1.1", "ip4.src == 10.0.0.0/33", "reg0[5..1] == 1", "inport == 5",
         "(" * 100 + "ip4" + ")" * 100, "(" * 101 + "ip4" + ")" * 101, "(" * 249 + "ip4" + ")" * 249,
         "ip4 && \x1c", "ip4\x85", "ip4\xa0&& tcp", "ip4\u2028", "!" * 1000 + "ip4", "(" * 250 + "ip4" + ")" * 250]


def ours(text: str) -> str | None:
    try:
        acl_match.parse(text, address_sets=ADDRESS_SETS, port_groups=PORT_GROUPS)
    except acl_match.MatchError as exc:
        return str(exc)
    return None


def printable(text: str) -> bool:
    return all(c.isprintable() or c in " \t\n\r\v\f" for c in text)


@needs_ovn
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_match_fabricgen_accepts_is_one_ovn_refuses(seed: int) -> None:
    corpus = Corpus(seed).matches(4000)
    verdicts = judge([*corpus, *FOUND], address_sets=ADDRESS_SETS, port_groups=PORT_GROUPS, programs=OVN_25_03)
    assert verdicts.ovn_version.startswith("25.03.")
    accepted_refused = [(m, verdicts.of(m)) for m in verdicts.judged if ours(m) is None and verdicts.of(m)]
    assert not accepted_refused, accepted_refused[:10]
    refused_accepted = [(m, ours(m)) for m in verdicts.judged if ours(m) and verdicts.of(m) is None]
    assert all(not printable(m) for m, _why in refused_accepted), refused_accepted[:10]
    both = sum(1 for m in verdicts.judged if verdicts.of(m) is None)
    assert both > 400, f"only {both} matches OVN parses: the corpus tests too little that is valid"


@needs_ovn
def test_the_symbol_table_is_ovns() -> None:
    """Each field's type, width and level, asked of OVN 25.03: a string compares with "x"; the
    widest constant it takes is its width; `<` is refused on a nominal field; `!FIELD` is
    refused on a nominal predicate."""
    probes: dict[tuple[str, str], str] = {}
    for name, symbol in SYMBOLS.items():
        probes[(name, "string")] = f'{name} == "x"'
        if symbol.width:
            probes[(name, "fits")] = f"{name} == 0x{(1 << symbol.width) - 1:x}"
            probes[(name, "wider")] = f"{name} == 0x{(1 << symbol.width + 1) - 1:x}"
            probes[(name, "lt")] = f"{name} < 1"
            probes[(name, "not")] = f"!{name}"
    verdicts = judge(probes.values(), programs=OVN_25_03)
    wrong = []
    for name, symbol in SYMBOLS.items():
        said = {kind: verdicts.of(text) for (field, kind), text in probes.items() if field == name}
        if (said["string"] is None) != (symbol.width == 0):
            wrong.append((name, "string", said["string"]))
        if symbol.width:
            if said["fits"] is not None or said["wider"] is None:
                wrong.append((name, "width", symbol.width, said["fits"], said["wider"]))
            refused_lt = (said["lt"] or "").lower()
            if ("nominal" in refused_lt, "boolean" in refused_lt) != (symbol.level == NOMINAL, symbol.level == BOOLEAN):
                wrong.append((name, "level", symbol.level, said["lt"]))
            if ("Nominal predicate" in (said["not"] or "")) != symbol.predicate:
                wrong.append((name, "predicate", symbol.predicate, said["not"]))
    assert not wrong, wrong

