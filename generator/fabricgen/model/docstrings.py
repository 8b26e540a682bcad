"""Field documentation for the JSON schema, read from attribute docstrings.

Each model field is documented by the string literal under it. pydantic can
read those itself (`use_attribute_docstrings`), but only by fetching and parsing
every model's source when the class is created, which cost `fabricgen render`
about 60 ms of its start-up on every commit. fabricgen reads them here instead,
when `fabricgen schema` asks for them, and nowhere else.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

from pydantic import BaseModel


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """`root` and every model reachable from its fields, each once, in discovery order."""
    found: list[type[BaseModel]] = []
    pending: list[Any] = [root]
    while pending:
        item = pending.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            if item in found:
                continue
            found.append(item)
            pending.extend(field.annotation for field in item.model_fields.values())
        else:
            pending.extend(getattr(item, "__args__", ()) or ())
    return found


def _own_docstrings(cls: type) -> dict[str, str]:
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for node, following in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _docstrings(cls: type[BaseModel]) -> dict[str, str]:
    """A model's field docstrings, inherited ones included (the subclass wins)."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if issubclass(base, BaseModel) and base.__module__.startswith("fabricgen."):
            docs.update(_own_docstrings(base))
    return docs


def attach(root: type[BaseModel]) -> None:
    """Give every field its docstring as its description, and rebuild the models.

    A field's docstring says what that field is for, so it wins over the description of its
    type (`Label`: "DNS-1123 label ..."), which the schema shows as the pattern anyway; a field
    without a docstring keeps its type's. Descriptions change the JSON schema only, never
    validation. Idempotent.
    """
    models = _models(root)
    for cls in models:
        docs = _docstrings(cls)
        for name, field in cls.model_fields.items():
            if name in docs:
                field.description = docs[name]
    for cls in _children_first(root):
        cls.model_rebuild(force=True)


def _children_first(root: type[BaseModel]) -> list[type[BaseModel]]:
    """Every model reachable from `root`, each after all the models its fields use, so a
    model shared by two parents is rebuilt before either embeds its schema."""
    done: list[type[BaseModel]] = []

    def visit(cls: type[BaseModel]) -> None:
        if cls in done:
            return
        done.append(cls)  # marks it; re-appended below once its fields' models are done
        for field in cls.model_fields.values():
            for child in _models_in(field.annotation):
                visit(child)
        done.remove(cls)
        done.append(cls)

    visit(root)
    return done


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) or () for m in _models_in(arg)]
