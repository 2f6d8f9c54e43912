"""The extension's stub (python/ccfair/_native.pyi) describes the module as built: the same public names, the
same parameters, the same exception with its attributes. A new export, a renamed parameter or a removed
function fails here until the stub says so."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import ccfair
from ccfair import _native

STUB = Path(ccfair.__file__).parent / "_native.pyi"


def _stub() -> dict[str, ast.stmt]:
    """The stub's top-level definitions by name; names starting with one underscore are the stub's own
    type aliases, not the module's."""
    defs: dict[str, ast.stmt] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            defs[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defs[node.target.id] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]  # an alias, such as a former name
            if isinstance(target, ast.Name):
                defs[target.id] = node
    return {n: d for n, d in defs.items() if not (n.startswith("_") and not n.startswith("__"))}


def _module_names() -> set[str]:
    """What the module exports: its ``__all__`` and every name in it that is not the interpreter's."""
    own = {n for n in dir(_native) if not n.startswith("__")}
    return own | set(_native.__all__)


def test_the_stub_and_the_module_have_the_same_public_names():
    stub, module = set(_stub()), _module_names()
    assert module - stub == set(), "exported by the module but missing from _native.pyi"
    assert stub - module == set(), "in _native.pyi but not exported by the module"


@pytest.mark.parametrize("name", sorted(n for n, d in _stub().items() if isinstance(d, ast.FunctionDef)))
def test_each_function_has_the_stub_s_parameters(name):
    node = _stub()[name]
    assert isinstance(node, ast.FunctionDef)
    args = node.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    with_default = positional[len(positional) - len(args.defaults) :]
    built = inspect.signature(getattr(_native, name)).parameters.values()
    assert [p.name for p in built] == positional
    assert [p.name for p in built if p.default is not inspect.Parameter.empty] == with_default
    assert not args.kwonlyargs and args.vararg is None and args.kwarg is None


def test_the_former_name_of_the_error_is_the_same_class_in_the_stub_and_the_module():
    node = _stub()["ScenarioError"]
    assert isinstance(node, ast.Assign) and ast.unparse(node.value) == "InputError"
    assert _native.ScenarioError is _native.InputError


def test_input_error_is_the_stub_s_class_with_its_attributes():
    node = _stub()["InputError"]
    assert isinstance(node, ast.ClassDef)
    bases = [ast.unparse(b) for b in node.bases]
    assert [c.__name__ for c in _native.InputError.__mro__[1 : 1 + len(bases)]] == bases
    attributes = {
        s.target.id: ast.unparse(s.annotation)
        for s in node.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    }
    assert attributes == {"field": "str", "message": "str"}
    with pytest.raises(_native.InputError) as raised:
        _native.resolve("{")
    for attribute in attributes:
        assert isinstance(getattr(raised.value, attribute), str)
    assert raised.value.args == (raised.value.field, raised.value.message)


def test_the_version_is_a_string_as_the_stub_says():
    node = _stub()["__version__"]
    assert isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation) == "str"
    assert isinstance(_native.__version__, str) and _native.__version__
