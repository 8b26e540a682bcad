"""An OVN match expression, read the way OVN's own parser reads it, for the `match` of a raw ACL.

A port of ovn-org/ovn v25.03.0 `lib/lex.c` (`lex_token_parse`, `lex_parse_integer__`,
`lex_parse_mask`) and `lib/expr.c` (`expr_parse__`, `expr_parse_not`, `expr_parse_primary`,
`parse_field`, `parse_constant_set`, `type_check`, `make_cmp`) against OVN's symbol table
(`ovn_symbols`): what OVN refuses, this refuses, so that an ACL fabricgen accepts is never one
ovn-northd skips (an ACL that does not parse silently does not exist). Where OVN is installed
(verify, the tests, CI) OVN's own parser judges too (`fabricgen.lab.ovn.matches`), and
`tests/policy/test_acl_match_ovn.py` holds the two to each other over a generated corpus.

Address sets (`$name`) and port groups (`@name`) are checked against the names given to `parse`;
without them (a raw ACL may name Kube-OVN's own sets, which fabricgen does not know) any name is
taken, as a set of unknown values.

`parse` raises `MatchError` with the offset of the token at fault and OVN's reason.
"""

import difflib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import AddressValueError, IPv4Address, IPv6Address
from typing import Annotated

from pydantic import AfterValidator, Field

from fabricgen.model.ovn_symbols import BOOLEAN, NOMINAL, SYMBOLS, Symbol

MAX_LENGTH = 4096  # a match longer than this is not a hand-written ACL
MAX_PAREN_DEPTH = 100  # lib/expr.c MAX_PAREN_DEPTH: "Parentheses nested too deeply."
FIELDS = frozenset(SYMBOLS)

# token kinds
END, ID, INT, STR, ASET, PGROUP, OP, ERROR = "end", "id", "int", "string", "$", "@", "op", "error"
_OPS = ("==", "!=", "<=", ">=", "&&", "||", "<->", "..", "--", "(", ")", "{", "}", "[", "]", "=", "!",
        "<", ">", ",", ";", "-", ":")
_RELOPS = ("==", "!=", "<", "<=", ">", ">=")
_TURN = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_HEX = "0123456789abcdefABCDEF"
_MAC = re.compile(r"[0-9A-Fa-f]{1,2}(?::[0-9A-Fa-f]{1,2}){5}")


class MatchError(ValueError):
    """The text is not an OVN match expression; `at`: the offset of the character at fault."""

    def __init__(self, message: str, at: int | None = None) -> None:
        super().__init__(message)
        self.at = at


@dataclass(frozen=True)
class Constant:
    """A lexed integer (`value`, `mask` or None, `fmt`: decimal, hex, ipv4, ipv6, mac)."""

    value: int
    mask: int | None
    fmt: str

    @property
    def width(self) -> int:
        """`expr_constant_width`: the mask's width when masked, else by format."""
        if self.mask is not None:
            return self.mask.bit_length()
        return {"ipv4": 32, "ipv6": 128, "mac": 48}.get(self.fmt, self.value.bit_length())


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    at: int
    constant: Constant | None = None
    error: str = ""


# ------------------------------------------------------------------ the lexer (lib/lex.c)
def _is_id1(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c in "_."


def _integer_extent(text: str, at: int) -> int:
    end, saw_dot = at, False
    while end < len(text):
        c = text[end]
        if (c.isascii() and c.isalnum()) or (c == ":" and not saw_dot) or (c == "." and text[end + 1:end + 2] != "."):
            saw_dot = saw_dot or c == "."
            end += 1
        else:
            break
    return end


def _integer(word: str) -> Constant | str:
    """`lex_parse_integer__` of one word: a Constant, or OVN's error."""
    if not word:
        return "Integer constant expected."
    if len(word) == 17 and _MAC.fullmatch(word):
        return Constant(int("".join(p.zfill(2) for p in word.split(":")), 16), None, "mac")
    if word.isdigit() and word.isascii():
        if word[0] == "0" and len(word) > 1:
            return "Decimal constants must not have leading zeros."
        value = int(word)
        return Constant(value, None, "decimal") if value < 2**64 else "Decimal constants must be less than 2**64."
    if word[:2] in ("0x", "0X"):
        digits = word[2:]
        if not digits:
            return f"Hex digits expected following 0{word[1]}."
        if any(c not in _HEX for c in digits):
            return "Invalid syntax in hexadecimal constant."
        value = int(digits, 16)
        return Constant(value, None, "hex") if value < 2**128 else "Hexadecimal constant requires more than 128 bits."
    if len(word) < 46:
        try:
            return Constant(int(IPv4Address(word)), None, "ipv4")
        except AddressValueError:
            pass
        try:
            return Constant(int(IPv6Address(word)), None, "ipv6")
        except AddressValueError:
            pass
    return "Invalid numeric constant."


def _masked(value: Constant, mask: Constant) -> Constant | str:
    """`lex_parse_mask`: a value and its mask, or OVN's error."""
    if value.fmt == mask.fmt:
        bits = mask.value
    elif value.fmt == "ipv4" and mask.fmt == "decimal" and mask.value <= 32:
        bits = ((1 << 32) - 1) ^ ((1 << (32 - mask.value)) - 1)
    elif value.fmt == "ipv6" and mask.fmt == "decimal" and mask.value <= 128:
        bits = ((1 << 128) - 1) ^ ((1 << (128 - mask.value)) - 1)
    elif value.fmt == "decimal" and mask.fmt == "hex" and value.value == 0:
        return Constant(0, mask.value, "hex")
    else:
        return "Value and mask have incompatible formats."
    return Constant(value.value & bits, bits, value.fmt)


def _string(text: str, at: int) -> tuple[Token, int]:
    p = at + 1
    while True:
        if p >= len(text):
            return Token(ERROR, text[at:], at, error="Input ends inside quoted string."), p
        if text[p] == '"':
            try:
                json.loads(text[at:p + 1])
            except ValueError:
                return Token(ERROR, text[at:p + 1], at, error="Invalid string (not a JSON string)."), p + 1
            return Token(STR, text[at:p + 1], at), p + 1
        p += 2 if text[p] == "\\" and p + 1 < len(text) else 1


def tokens(text: str) -> list[Token]:
    """`lex_token_parse` over the whole text; an error token stops the lexer (OVN reports the
    first error the parser reaches)."""
    out: list[Token] = []
    p = 0
    while True:
        while p < len(text) and text[p] in " \t\n\r\v\f":
            p += 1
        if text.startswith("//", p):
            end = text.find("\n", p)
            p = len(text) if end < 0 else end
            continue
        if text.startswith("/*", p):
            end = text.find("*/", p + 2)
            line = text.find("\n", p + 2)
            if end < 0 or (0 <= line < end):
                out.append(Token(ERROR, "/*", p, error="`/*' without matching `*/'."))
                return out
            p = end + 2
            continue
        if p >= len(text):
            out.append(Token(END, "", p))
            return out
        c = text[p]
        token, p = _token(text, p, c)
        out.append(token)
        if token.kind == ERROR:
            return out


def _token(text: str, p: int, c: str) -> tuple[Token, int]:
    if c == '"':
        return _string(text, p)
    if c in "$@":
        if p + 1 >= len(text) or not _is_id1(text[p + 1]):
            return Token(ERROR, c, p, error=f"`{c}' must be followed by a valid identifier."), p + 1
        end = p + 2
        while end < len(text) and (_is_id1(text[end]) or (text[end].isdigit() and text[end].isascii())):
            end += 1
        return Token(ASET if c == "$" else PGROUP, text[p + 1:end], p), end
    if c == "/":
        return Token(ERROR, c, p, error="`/' is only valid as part of `//' or `/*'."), p + 1
    if c == "&" and text[p + 1:p + 2] != "&":
        return Token(ERROR, c, p, error="`&' is only valid as part of `&&'."), p + 1
    if c == "|" and text[p + 1:p + 2] != "|":
        return Token(ERROR, c, p, error="`|' is only valid as part of `||'."), p + 1
    if c == "." and text[p + 1:p + 2] != ".":
        return Token(ERROR, c, p, error="`.' is only valid as part of `..' or a number."), p + 1
    number = (c.isdigit() and c.isascii()) or (c == ":" and text[p + 1:p + 2] == ":") or (
        c in "abcdefABCDEF" and _hex_then_colon(text, p))
    if number:
        return _number(text, p)
    for op in _OPS:
        if text.startswith(op, p):
            return Token(OP, op, p), p + len(op)
    if _is_id1(c):
        end = p + 1
        while end < len(text) and (_is_id1(text[end]) or (text[end].isdigit() and text[end].isascii())):
            end += 1
        return Token(ID, text[p:end], p), end
    shown = f"character `{c}'" if c.isascii() and c.isprintable() else f"byte U+{ord(c):04X}"
    return Token(ERROR, c, p, error=f"Invalid {shown} in input."), p + 1


def _hex_then_colon(text: str, p: int) -> bool:
    end = p
    while end < len(text) and text[end] in _HEX:
        end += 1
    return text[end:end + 1] == ":"


def _number(text: str, p: int) -> tuple[Token, int]:
    end = _integer_extent(text, p)
    value = _integer(text[p:end])
    if isinstance(value, str):
        return Token(ERROR, text[p:end], p, error=value), end
    if text[end:end + 1] == "/":
        mend = _integer_extent(text, end + 1)
        mask = _integer(text[end + 1:mend])
        if isinstance(mask, str):
            return Token(ERROR, text[p:mend], p, error=mask), mend
        both = _masked(value, mask)
        if isinstance(both, str):
            return Token(ERROR, text[p:mend], p, error=both), mend
        return Token(INT, text[p:mend], p, both), mend
    return Token(INT, text[p:end], p, value), end


# ------------------------------------------------------------------ the parser (lib/expr.c)
@dataclass
class _Values:
    """A constant set: its type (`int`, `string`, or None while empty), the integers' constants
    (None where an address set's values are not known), whether in curlies."""

    kind: str | None
    constants: list[Constant | None]
    curlies: bool
    count: int


class _Parser:
    def __init__(self, text: str, address_sets: Mapping[str, Sequence[str]] | None,
                 port_groups: Collection[str] | None) -> None:
        self.tokens = tokens(text)
        self.i = 0
        self.depth = 0
        self.negated = False
        self.fields: list[str] = []
        self.address_sets = address_sets
        self.port_groups = port_groups

    # ------------------------------------------------------------- tokens
    @property
    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        if token.kind not in (END, ERROR):
            self.i += 1
        return token

    def error(self, message: str, token: Token | None = None) -> MatchError:
        token = token or self.peek
        if token.kind == ERROR:  # the lexer's error stands where the parser meets it
            return MatchError(f"at character {token.at + 1}: {token.error}", token.at)
        return MatchError(f"at character {token.at + 1}: {message}", token.at)

    def syntax(self, expecting: str) -> MatchError:
        token = self.peek
        seen = "the end" if token.kind == END else f"`{token.text}'"
        return self.error(f"syntax error at {seen} expecting {expecting}")

    def is_op(self, *ops: str) -> bool:
        return self.peek.kind == OP and self.peek.text in ops

    # ------------------------------------------------------------- expressions
    def expression(self) -> None:
        self.negation()
        if self.is_op("&&", "||"):
            joiner = self.take().text
            while True:
                self.negation()
                if self.is_op(joiner):
                    self.take()
                    continue
                break
            if self.is_op("&&", "||"):
                raise self.error("&& and || must be parenthesized when used together")

    def negation(self) -> None:
        if self.is_op("!"):
            self.take()
            self.negated = not self.negated
            atomic = self.primary()
            self.negated = not self.negated
            if not atomic:
                raise self.error("missing parentheses around operand of !")
            return
        self.primary()

    def primary(self) -> bool:
        """One primary expression; whether it is atomic (parenthesised, a bare field, a boolean)."""
        token = self.peek
        if self.is_op("("):
            if self.depth >= MAX_PAREN_DEPTH:
                raise self.error(f"parentheses nested too deeply (OVN allows {MAX_PAREN_DEPTH})", token)
            self.take()
            self.depth += 1
            self.expression()
            self.depth -= 1
            if not self.is_op(")"):
                raise self.syntax("`)'")
            self.take()
            return True
        if token.kind == ID:
            if self.tokens[self.i + 1].kind == OP and self.tokens[self.i + 1].text == "(":
                return self.chassis_resident()
            symbol, bits = self.field()
            if not self.is_op(*_RELOPS):
                if bits == 0 or self.is_op("="):
                    raise self.syntax("relational operator")
                if bits > 1 and not self.negated:
                    raise self.error("explicit `!= 0' is required for inequality test of multibit field against 0")
                self.compare(token, symbol, bits, "!=", _Values("int", [Constant(0, None, "hex")], False, 1))
                return True
            relop = self.take().text
            self.compare(token, symbol, bits, relop, self.constant_set())
            return False
        values = self.constant_set()
        single = values.constants[0] if values.count == 1 and values.constants else None
        if (not self.is_op(*_RELOPS) and single is not None and values.kind == "int" and single.fmt == "decimal"
                and single.mask is None and not values.curlies and single.value <= 1):
            return True
        if not self.is_op(*_RELOPS):
            raise self.syntax("relational operator")
        first = self.take().text
        where = self.peek
        symbol, bits = self.field()
        if not self.is_op(*_RELOPS):
            self.compare(where, symbol, bits, _TURN[first], values)
            return False
        second = self.take().text
        upper = self.constant_set()
        if not ((first in ("<", "<=") and second in ("<", "<=")) or (first in (">", ">=") and second in (">", ">="))):
            raise self.error("range expressions must have the form `x < field < y' or `x > field > y'")
        self.compare(where, symbol, bits, _TURN[first], values)
        self.compare(where, symbol, bits, second, upper)
        return False

    def chassis_resident(self) -> bool:
        token = self.take()
        if token.text != "is_chassis_resident":
            raise self.error("parsing function name", token)
        self.take()  # (
        if self.peek.kind != STR:
            raise self.syntax("string")
        self.take()
        if not self.is_op(")"):
            raise self.syntax("`)'")
        self.take()
        return True

    # ------------------------------------------------------------- fields
    def field(self) -> tuple[Symbol, int]:
        token = self.peek
        symbol = SYMBOLS.get(token.text) if token.kind == ID else None
        if symbol is None and token.kind == ID:
            near = difflib.get_close_matches(token.text, list(SYMBOLS), n=1)
            raise self.error(f"`{token.text}' is no field of OVN 25.03 (lib/logical-fields.c), so OVN refuses the match"
                             + (f"; did you mean `{near[0]}'?" if near else ""))
        if symbol is None:
            raise self.syntax("field name")
        self.take()
        self.fields.append(token.text)
        bits = symbol.width
        if self.is_op("["):
            self.take()
            if not symbol.width:
                raise self.error(f"cannot select subfield of string field {token.text}")
            low = self.index()
            high = low
            if self.is_op(".."):
                self.take()
                high = self.index()
            if not self.is_op("]"):
                raise self.syntax("`]'")
            self.take()
            if low > high:
                raise self.error(f"invalid bit range {low} to {high}", token)
            if high >= symbol.width:
                raise self.error(f"cannot select bits {low} to {high} of {symbol.width}-bit field {token.text}", token)
            if symbol.level == NOMINAL and (low != 0 or high != symbol.width - 1):
                raise self.error(f"cannot select subfield of nominal field {token.text}", token)
            bits = high - low + 1
        return symbol, bits

    def index(self) -> int:
        token = self.peek
        if token.kind != INT or token.constant is None or token.constant.mask is not None or \
                token.constant.fmt != "decimal" or token.constant.value >= 2**31:
            raise self.syntax("small integer")
        self.take()
        return token.constant.value

    # ------------------------------------------------------------- constants
    def constant_set(self) -> _Values:
        values = _Values(None, [], False, 0)
        if self.is_op("{"):
            self.take()
            values.curlies = True
            while True:
                self.constant(values)
                if self.is_op(","):
                    self.take()
                if self.is_op("}"):
                    self.take()
                    break
        else:
            self.constant(values)
        return values

    def constant(self, values: _Values) -> None:
        token = self.peek
        if token.kind == STR:
            self.typed(values, "string")
            values.count += 1
        elif token.kind == INT:
            self.typed(values, "int")
            values.constants.append(token.constant)
            values.count += 1
        elif token.kind == ASET:
            if self.address_sets is not None and token.text not in self.address_sets:
                raise self.syntax("address set name")
            self.typed(values, "int")
            known = self.address_sets.get(token.text) if self.address_sets is not None else None
            if known is None:
                values.constants.append(None)
                values.count += 1
            else:
                for address in known:
                    parsed = _integer(address.split("/")[0])
                    values.constants.append(parsed if isinstance(parsed, Constant) else None)
                    values.count += 1
        elif token.kind == PGROUP:
            if self.port_groups is not None and token.text not in self.port_groups:
                raise self.syntax("port group name")
            self.typed(values, "string")
            values.count += 1
        else:
            raise self.syntax("constant")
        self.take()

    def typed(self, values: _Values, kind: str) -> None:
        if values.kind is not None and values.kind != kind:
            raise self.error("constants in a set must all have the same type")
        values.kind = kind

    # ------------------------------------------------------------- make_cmp
    def compare(self, where: Token, symbol: Symbol, bits: int, relop: str, values: _Values) -> None:
        name = where.text
        if values.kind is not None and values.kind != ("int" if symbol.width else "string"):
            raise self.error(f"{'integer' if symbol.width else 'string'} field {name} is not compatible with "
                             f"{values.kind if values.kind == 'string' else 'integer'} constant", where)
        if symbol.width:
            for constant in values.constants:
                if constant is not None and constant.width > symbol.width:
                    raise self.error(f"{constant.width}-bit constant is not compatible with {symbol.width}-bit "
                                     f"field {name}", where)
        if relop not in ("==", "!="):
            if values.curlies:
                raise self.error("only == and != operators may be used with value sets", where)
            if symbol.level in (NOMINAL, BOOLEAN):
                raise self.error(f"only == and != operators may be used with {symbol.level} field {name}", where)
            if not values.count:
                raise self.error("only == and != may compare a field with an empty value set", where)
            first = values.constants[0] if values.constants else None
            if first is not None and first.mask is not None:
                raise self.error("only == and != operators may be used with masked constants", where)
        if symbol.level == NOMINAL:
            if symbol.predicate:
                for constant in values.constants:
                    positive = bool(constant.value & 1) if constant is not None else True
                    if not positive ^ (relop == "!=") ^ self.negated:
                        raise self.error(f"nominal predicate {name} may only be tested positively (`{name}' or "
                                         f"`{name} == 1', not `!{name}' or `{name} == 0')", where)
            elif relop != ("!=" if self.negated else "=="):
                raise self.error(f"nominal field {name} may only be tested for equality (taking enclosing `!' "
                                 "operators into account)", where)


def parse(text: str, *, address_sets: Mapping[str, Sequence[str]] | None = None,
          port_groups: Collection[str] | None = None) -> tuple[str, ...]:
    """Check `text` as OVN 25.03 reads a match; the fields it names, in order."""
    if not text.strip():
        raise MatchError("the match is empty; Kube-OVN refuses an ACL without one (pkg/ovs/ovn-nb-acl.go newACL)")
    if len(text) > MAX_LENGTH:
        raise MatchError(f"the match is {len(text)} characters long; at most {MAX_LENGTH}")
    odd = next((i for i, c in enumerate(text) if not c.isprintable() and c not in " \t\n\r\v\f"), None)
    if odd is not None:  # OVN refuses them outside a string; inside one none belongs in an ACL
        raise MatchError(f"at character {odd + 1}: U+{ord(text[odd]):04X} is not printable (a control, a line "
                         "separator or a bidirectional override); an ACL's match is printable text", odd)
    parser = _Parser(text, address_sets, port_groups)
    parser.expression()
    if parser.peek.kind != END:
        raise parser.syntax("end of input")
    return tuple(parser.fields)


def _checked(text: str) -> str:
    parse(text)  # MatchError is a ValueError: located like any other field error
    return text


OvnMatch = Annotated[str, Field(min_length=1), AfterValidator(_checked)]
"""An OVN match expression, refused where OVN 25.03's parser would refuse it (`parse`)."""


def references(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The address sets (`$name`) and port groups (`@name`) a match names, each once, in order."""
    found = [t for t in tokens(text) if t.kind in (ASET, PGROUP)]
    return (tuple(dict.fromkeys(t.text for t in found if t.kind == ASET)),
            tuple(dict.fromkeys(t.text for t in found if t.kind == PGROUP)))


def unknown_fields(fields: tuple[str, ...]) -> list[str]:
    """The fields OVN's symbol table (v25.03) does not have (none, for a match `parse` took)."""
    return [f for f in dict.fromkeys(fields) if f not in FIELDS]
