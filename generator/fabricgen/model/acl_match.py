"""An OVN match expression, parsed the way OVN's own parser reads it, for the `match` of a raw ACL.

The grammar and the lexer are ovn-org/ovn `lib/expr.c` (`expr_parse`, `expr_parse_not`,
`expr_parse_primary`, `parse_relop`, `parse_constant_set`) and `lib/lex.c` (`lex_token_parse`),
v25.03.0: `||` and `&&` (not mixed without parentheses: expr.c refuses "&& and || must be
parenthesized when used together"), `!`, parentheses, `FIELD`, `FIELD RELOP VALUE`,
`VALUE RELOP FIELD RELOP VALUE` (a range, with `<` or `<=` both times), where a value is a
constant (a decimal or hex integer, an IPv4 or IPv6 address with an optional `/PREFIX` or
`/MASK`, a MAC address, a quoted string), a set `{c, c, ...}`, an address set `$name` or a port
group `@name`, and a field may carry a bit range `[N]` or `[N..M]`. Field names are checked by
`unknown_fields` against OVN's symbol table (`lib/logical-fields.c` `ovn_init_symtab`, v25.03.0),
separately, so that a field a newer OVN adds is a warning and not a refusal.

`parse` raises `MatchError` with the offset and what was expected, as OVN's parser reports it.
"""

import re
from dataclasses import dataclass

MAX_LENGTH = 4096  # a match longer than this is not a hand-written ACL
MAX_PAREN_DEPTH = 100  # lib/expr.c MAX_PAREN_DEPTH: "Too many nested parentheses."
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>!(){}\[\],]|\.\.)
  | (?P<ref>[$@][A-Za-z_][A-Za-z0-9_.]*)
  | (?P<mac>[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}(?:/[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5})?)
  | (?P<ipv6>(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:/[0-9]{1,3})?)
  | (?P<ipv4>[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9]{1,2}))?)
  | (?P<number>0[xX][0-9A-Fa-f]+|[0-9]+)
  | (?P<id>[A-Za-z_][A-Za-z0-9_.]*)
""", re.VERBOSE)
_RELOPS = ("==", "!=", "<", "<=", ">", ">=")
_CONSTANTS = ("string", "ipv6", "mac", "ipv4", "number", "ref")

# lib/logical-fields.c, v25.03.0: every name ovn_init_symtab adds, and the families it adds in loops
FIELDS = frozenset(str.split("""
inport outport flags flags.loopback flags.force_snat_for_dnat flags.force_snat_for_lb
flags.skip_snat_for_lb flags.use_snat_zone flags.localnet flags.icmp_snat flags.tunnel_rx
flags.unsnat_new flags.unsnat_not_tracked flags.from_ctrl ct_mark ct_mark.blocked ct_mark.natted
ct_mark.ecmp_reply_port ct_mark.skip_snat ct_mark.force_snat ct_mark.obs_stage
ct_mark.allow_established ct_mark.obs_collector_id ct_label ct_label.ecmp_reply_eth ct_label.label
ct_label.obs_point_id ct_label.obs_unused ct_label.acl_id ct_state ct.new ct.est ct.rel ct.rpl ct.inv
ct.trk ct.snat ct.dnat eth.src eth.dst eth.type eth.bcast eth.mcast eth.mcastv6 vlan.tci vlan.present
vlan.pcp vlan.vid ip4 ip6 ip ip.proto ip.dscp ip.ecn ip.ttl ip4.src ip4.dst ip4.src_mcast ip4.mcast
icmp4 icmp4.type icmp4.code igmp ip6.src ip6.dst ip6.label ip6.mcast_rsvd ip6.mcast_all_nodes
ip6.mcast_all_rtrs ip6.mcast_sol_node ip6.mcast_flood ip6.mcast icmp6 icmp6.type icmp6.code icmp
ip.frag ip.is_frag ip.later_frag ip.first_frag arp arp.op arp.spa arp.sha arp.tpa arp.tha rarp
rarp.op rarp.spa rarp.sha rarp.tpa rarp.tha nd nd_ns nd_ns_mcast nd_na nd_rs nd_ra nd.target nd.sll
nd.tll mldv1 mldv2 tcp tcp.src tcp.dst tcp.flags udp udp.src udp.dst sctp sctp.src sctp.dst pkt.mark
icmp4.frag_mtu icmp6.frag_mtu
"""))
_REGISTER = re.compile(r"(xx)?reg[0-9]+|xreg[0-9]+")


class MatchError(ValueError):
    """The text is not an OVN match expression; `at`: the offset of the character at fault."""

    def __init__(self, message: str, at: int | None = None) -> None:
        super().__init__(message)
        self.at = at


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    at: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    at = 0
    while at < len(text):
        found = _TOKEN.match(text, at)
        if found is None or found.lastgroup is None:
            raise MatchError(f"at character {at + 1}: {text[at]!r} does not begin a token of an OVN match", at)
        if found.lastgroup != "space":
            out.append(_Token(found.lastgroup, found.group(), at))
        at = found.end()
    out.append(_Token("end", "", len(text)))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0
        self.fields: list[str] = []

    @property
    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def fail(self, expected: str) -> MatchError:
        token = self.peek
        seen = "the end" if token.kind == "end" else f"{token.text!r}"
        return MatchError(f"at character {token.at + 1}: {expected} expected, {seen} found", token.at)

    def expect(self, text: str) -> None:
        if self.peek.text != text or self.peek.kind not in ("op",):
            raise self.fail(f"{text!r}")
        self.take()

    def expression(self) -> None:
        self.conjunction_or_disjunction()

    def conjunction_or_disjunction(self) -> None:
        self.negation()
        joiner = None
        while self.peek.kind == "op" and self.peek.text in ("&&", "||"):
            if joiner is not None and self.peek.text != joiner:
                raise MatchError(f"at character {self.peek.at + 1}: && and || must be parenthesized when used "
                                 "together (OVN lib/expr.c)", self.peek.at)
            joiner = self.take().text
            self.negation()

    def negation(self) -> None:
        while self.peek.kind == "op" and self.peek.text == "!":  # a loop: a thousand `!` is no recursion
            self.take()
        self.primary()

    def primary(self) -> None:
        token = self.peek
        if token.kind == "op" and token.text == "(":
            if self.depth >= MAX_PAREN_DEPTH:
                raise MatchError(f"at character {token.at + 1}: too many nested parentheses (OVN's lib/expr.c "
                                 f"refuses more than {MAX_PAREN_DEPTH})", token.at)
            self.depth += 1
            self.take()
            self.expression()
            self.expect(")")
            self.depth -= 1
            return
        if token.kind == "id":
            self.field()
            if self.peek.kind == "op" and self.peek.text in _RELOPS:
                self.take()
                self.value()
            return
        if (token.kind in _CONSTANTS and token.kind != "ref") or (token.kind == "op" and token.text == "{"):
            self.value()  # VALUE RELOP FIELD RELOP VALUE: a range
            first = self.relop(("<", "<=", ">", ">="))
            self.field()
            second = self.relop(("<", "<=", ">", ">="))
            if (first in ("<", "<=")) != (second in ("<", "<=")):
                raise MatchError(f"at character {token.at + 1}: a range's two comparisons must point the same way",
                             token.at)
            self.value()
            return
        raise self.fail("a field, a constant, '!' or '('")

    def relop(self, allowed: tuple[str, ...]) -> str:
        if self.peek.kind != "op" or self.peek.text not in allowed:
            raise self.fail("a relational operator (" + ", ".join(allowed) + ")")
        return self.take().text

    def field(self) -> None:
        token = self.take()
        if token.kind != "id":
            raise MatchError(f"at character {token.at + 1}: a field expected, {token.text!r} found", token.at)
        self.fields.append(token.text)
        if self.peek.kind == "op" and self.peek.text == "[":
            self.take()
            if self.take().kind != "number":
                raise MatchError(f"at character {token.at + 1}: a bit index expected in {token.text}[...]", token.at)
            if self.peek.kind == "op" and self.peek.text == "..":
                self.take()
                if self.take().kind != "number":
                    raise MatchError(f"at character {token.at + 1}: a bit index expected after '..'", token.at)
            self.expect("]")

    def value(self) -> None:
        token = self.peek
        if token.kind == "op" and token.text == "{":
            self.take()
            while True:
                self.constant()
                if self.peek.kind == "op" and self.peek.text == ",":
                    self.take()
                    if self.peek.kind == "op" and self.peek.text == "}":
                        break  # OVN accepts a trailing comma
                    continue
                break
            self.expect("}")
            return
        self.constant()

    def constant(self) -> None:
        if self.peek.kind not in _CONSTANTS:
            raise self.fail("a constant (an integer, an address, a string, $address_set or @port_group)")
        self.take()


def parse(text: str) -> tuple[str, ...]:
    """Check `text` as an OVN match expression; the fields it names, in order."""
    if not text.strip():
        raise MatchError("the match is empty; Kube-OVN refuses an ACL without one (pkg/ovs/ovn-nb-acl.go newACL)")
    if len(text) > MAX_LENGTH:
        raise MatchError(f"the match is {len(text)} characters long; at most {MAX_LENGTH}")
    odd = next((i for i, c in enumerate(text) if not c.isprintable() and c not in " \t\n\r"), None)
    if odd is not None:  # OVN's lexer refuses most of these (it reads blanks as space); none belongs in a match
        raise MatchError(f"at character {odd + 1}: U+{ord(text[odd]):04X} is not printable; an OVN match is "
                         "printable text", odd)
    parser = _Parser(text)
    parser.expression()
    if parser.peek.kind != "end":
        raise parser.fail("'&&', '||' or the end of the match")
    return tuple(parser.fields)


def unknown_fields(fields: tuple[str, ...]) -> list[str]:
    """The fields OVN's symbol table (v25.03.0) does not have."""
    return [f for f in dict.fromkeys(fields) if f not in FIELDS and not _REGISTER.fullmatch(f)]
