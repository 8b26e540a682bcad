"""A generated corpus of OVN match expressions, valid and not: every construct OVN's grammar has
(ovn-org/ovn `lib/expr.c`, `lib/lex.c`) and the ways each goes wrong, for holding fabricgen's
match grammar (`fabricgen.model.acl_match`) to OVN's own parser.

Seeded: the same seed gives the same corpus. Declared names: address set `as1` (two IPv4
addresses), `as6` (an IPv6 one), `empty` (none), port group `pg1`; `nope` and `@pgx` are not.
"""

from __future__ import annotations

import random

from fabricgen.model.ovn_symbols import SYMBOLS

ADDRESS_SETS = {"as1": ["10.0.0.1", "10.0.0.2"], "as6": ["fd00::1"], "empty": []}
PORT_GROUPS = {"pg1"}
RELOPS = ("==", "!=", "<", "<=", ">", ">=")
ODD = ("\x1c", "\x85", "\xa0", "\u2028", "\x00", "\x7f", "é", "\u202e", "\t", "\n", "\v", "#", "^", "'", "&", "|",
       "/", ".", ";", ":", "-", "--", "<->", "=")


class Corpus:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fields = sorted(SYMBOLS)

    # ------------------------------------------------------------- pieces
    def number(self) -> str:
        r = self.rng
        kind = r.randrange(9)
        if kind == 0:
            return str(r.choice([0, 1, 2, 3, 6, 17, 80, 443, 255, 256, 65535, 65536, 4095, 4096]))
        if kind == 1:
            return str(r.getrandbits(r.choice([1, 7, 8, 12, 16, 20, 32, 48, 64, 65, 70])))
        if kind == 2:
            return "0" + str(r.randrange(1, 100))  # a leading zero
        if kind == 3:
            return hex(r.getrandbits(r.choice([1, 4, 8, 12, 16, 32, 48, 64, 128, 129, 140])))
        if kind == 4:
            octets = [r.choice([0, 1, 10, 99, 168, 255, 256, 300]) for _ in range(4)]
            text = ".".join(map(str, octets)) if r.random() < 0.9 else "010.1.1.1"
            return text + (f"/{r.randrange(0, 40)}" if r.random() < 0.4 else "")
        if kind == 5:
            text = r.choice(["fd00::1", "::", "::1", "fe80::1:2", "2001:db8::/32", "::ffff:10.0.0.1", "fd00:::1",
                             "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "fd00::g"])
            return text + (f"/{r.randrange(0, 140)}" if "/" not in text and r.random() < 0.3 else "")
        if kind == 6:
            return r.choice(["00:11:22:33:44:55", "0:11:22:33:44:55", "00:11:22:33:44:55/ff:ff:ff:00:00:00",
                             "00:11:22:33:44", "aa:bb:cc:dd:ee:ff"])
        if kind == 7:
            return r.choice(["0/0x10", "1/0x10", "0x10/0xf0", "10.0.0.0/255.255.0.0", "10.0.0.0/0xff",
                             "0x", "0xg", "1.2.3", "1e5"])
        return r.choice(['"x"', '"p1"', '""', '"a\\"b"', '"a\\qb"', '"unterminated', '"é"'])

    def constant(self) -> str:
        r = self.rng
        pick = r.random()
        if pick < 0.7:
            return self.number()
        if pick < 0.8:
            return r.choice(["$as1", "$as6", "$empty", "$nope", "$", "$1x"])
        if pick < 0.9:
            return r.choice(["@pg1", "@pgx", "@"])
        items = [self.number() if r.random() < 0.8 else r.choice(["$as1", "@pg1"]) for _ in range(r.randrange(0, 4))]
        join = r.choice([", ", " ", ","])
        return "{" + join.join(items) + (r.choice(["", ","])) + "}"

    def field(self) -> str:
        r = self.rng
        name = r.choice(self.fields) if r.random() < 0.95 else r.choice(["reg10", "xreg5", "ip4.foo", "eth"])
        if r.random() < 0.2:
            low = r.choice([0, 1, 5, 15, 31, 47, 127, 128])
            high = r.choice([low, low + 1, low + 4, 0, 200])
            name += f"[{low}..{high}]" if r.random() < 0.7 else f"[{low}]"
        return name

    def fitting(self) -> str:
        """A comparison OVN should take: a constant of the field's type and width, a relational
        operator its level allows."""
        r = self.rng
        name = r.choice(self.fields)
        symbol = SYMBOLS[name]
        if not symbol.width:
            return name + " == " + r.choice(['"p1"', "@pg1", '{"a", "b"}'])
        if symbol.width == 1:
            return r.choice([name, f"{name} == 1", f"{name} != 0"] + ([f"!{name}"] if not symbol.predicate else []))
        value = r.choice([
            str(r.getrandbits(min(symbol.width, 62)) or 1),
            hex(r.getrandbits(symbol.width) or 1),
            *([f"10.{r.randrange(256)}.0.0/{r.randrange(8, 33)}", "$as1", "{10.0.0.1, 10.0.0.2}"]
              if symbol.width == 32 else []),
            *(["fd00::1", "fd00::/64", "$as6"] if symbol.width == 128 else []),
            *(["00:11:22:33:44:55", "01:00:00:00:00:00/01:00:00:00:00:00"] if symbol.width == 48 else [])])
        relop = "==" if symbol.level != "ordinal" or "/" in value or "{" in value or "$" in value else r.choice(RELOPS)
        if symbol.level == "nominal" and not symbol.predicate:
            relop = "=="
        return f"{name} {relop} {value}"

    def primary(self, depth: int) -> str:
        r = self.rng
        if r.random() < 0.45:
            return self.fitting()
        pick = r.random()
        if pick < 0.15 and depth < 3:
            return "(" + self.expression(depth + 1) + ")"
        if pick < 0.3:
            return self.field()
        if pick < 0.7:
            return f"{self.field()} {r.choice((*RELOPS, '='))} {self.constant()}"
        if pick < 0.8:
            return f"{self.constant()} {r.choice(RELOPS)} {self.field()}"
        if pick < 0.88:
            return f"{self.constant()} {r.choice(RELOPS)} {self.field()} {r.choice(RELOPS)} {self.constant()}"
        if pick < 0.94:
            return r.choice(["0", "1", "2", "01", "0x1"])
        return r.choice(['is_chassis_resident("p1")', 'is_chassis_resident(p1)', 'foo("x")'])

    def unary(self, depth: int) -> str:
        r = self.rng
        prefix = r.choice(["", "", "", "!", "! ", "!!"])
        return prefix + self.primary(depth)

    def expression(self, depth: int = 0) -> str:
        r = self.rng
        parts = [self.unary(depth)]
        for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
            parts.append(r.choice(["&&", "||", "&&", "&&"]))
            parts.append(self.unary(depth))
        return " ".join(parts)

    def match(self) -> str:
        r = self.rng
        text = self.expression()
        pick = r.random()
        if pick < 0.05:
            n = r.choice([98, 99, 100, 101, 102])
            text = "(" * n + text + ")" * n
        elif pick < 0.12:
            at = r.randrange(len(text) + 1)
            text = text[:at] + r.choice(ODD) + text[at:]
        elif pick < 0.16:
            text = text + r.choice([" // note", " /* c */", " /* open", "/"])
        return text

    def matches(self, count: int) -> list[str]:
        return [self.match() for _ in range(count)]
