"""`fabricgen.serialise.commented_yaml`: the commented document `fabricgen import` writes."""

from __future__ import annotations

from ruamel.yaml import YAML

from fabricgen.serialise import commented_yaml as cy


def load(text: str) -> object:
    return YAML(typ="safe").load(text)


def test_layout_comments_and_flow_style() -> None:
    members = cy.Seq().add(cy.Map(flow=True).add("node", "hq-node-1").add("address", "10.10.10.11"), comment="first")
    zone = cy.Map().add("name", "hq").add("gatewayNodes", cy.Seq(flow=True).add("a").add("b")).add("members", members)
    doc = cy.Map().add("kind", "Fabric", comment="a comment").add("zones", cy.Seq().add(zone, above=("", "cluster hq")))
    text = cy.dump(doc, ["yaml-language-server: $schema=../../schemas/fabric.schema.json", ""])
    assert text == (
        "# yaml-language-server: $schema=../../schemas/fabric.schema.json\n"
        "#\n"
        "kind: Fabric                       # a comment\n"
        "zones:\n"
        "\n"
        "  # cluster hq\n"
        "  - name: hq\n"
        "    gatewayNodes: [a, b]\n"
        "    members:\n"
        "      - {node: hq-node-1, address: \"10.10.10.11\"}  # first\n")
    assert load(text) == cy.plain(doc)


def test_values_that_look_like_syntax_are_quoted() -> None:
    tricky = ["a: b", "- x", "# c", "{d}", "[e]", "yes", "null", "1.5", "", "x\ny", "'q'", '"r"', "*alias", "&anchor",
              "!tag", "%dir", "@at", "`tick`", "a #b", "06:00"]
    doc = cy.Map().add("values", cy.Seq(flow=True, items=[cy.Item(v) for v in tricky]))
    doc.add("block", cy.Seq(items=[cy.Item(v) for v in tricky]))
    doc.add("map", cy.Map(flow=True, entries=[cy.Entry(f"k{i}", v) for i, v in enumerate(tricky)]))
    doc.add("a: key", "value")
    assert load(cy.dump(doc)) == cy.plain(doc)


def test_a_comment_is_one_printable_line() -> None:
    text = cy.dump(cy.Map().add("a", 1, comment="x\n- b: c\x1b[2J"))
    assert text.endswith("# x\\x0a- b: c\\x1b[2J\n") and text.count("\n") == 1
    assert load(text) == {"a": 1}
    assert cy.dump(cy.Map(), ["\u202eevil"]).startswith("# \\u202eevil\n")


def test_long_flow_lists_become_blocks() -> None:
    names = [f"node-{i:03d}.example.org" for i in range(12)]
    text = cy.dump(cy.Map().add("gatewayNodes", cy.Seq(flow=True, items=[cy.Item(n) for n in names])))
    assert text.startswith("gatewayNodes:\n  - node-000.example.org\n")
    assert load(text) == {"gatewayNodes": names}
